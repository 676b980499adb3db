//go:build linux && amd64

package elfsym

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/utap/utap/internal/fixture"
)

// splitDebug strips bin (a copy in a temporary directory) and moves its
// symbols and DWARF to a separate file, linked by .gnu_debuglink. It
// returns the stripped file and the debug file.
func splitDebug(t *testing.T, debugDir string) (string, string) {
	t.Helper()
	bin := tempCopy(t, fixture.C(t, "elf_target.c"), "prog")
	if debugDir != "" {
		debugDir = filepath.Join(filepath.Dir(bin), debugDir)
		if err := os.MkdirAll(debugDir, 0o755); err != nil {
			t.Fatal(err)
		}
	} else {
		debugDir = filepath.Dir(bin)
	}
	dbg := filepath.Join(debugDir, "prog.debug")
	run(t, "objcopy", "--only-keep-debug", bin, dbg)
	run(t, "objcopy", "--strip-all", "--add-gnu-debuglink="+dbg, bin)
	return bin, dbg
}

func checkDebugSite(t *testing.T, bin string) {
	t.Helper()
	s := resolveOne(t, Target{Exe: bin}, "elf_count") // static: only in the debug file's .symtab
	if !reflect.DeepEqual(s.Params, []string{"text", "ch"}) {
		t.Errorf("Params %q", s.Params)
	}
	checkSiteBytes(t, s)
}

func TestDebugLinkBeside(t *testing.T) {
	bin, _ := splitDebug(t, "")
	checkDebugSite(t, bin)
}

func TestDebugLinkDotDebug(t *testing.T) {
	bin, _ := splitDebug(t, ".debug")
	checkDebugSite(t, bin)
}

func TestDebugLinkCRCMismatch(t *testing.T) {
	bin, dbg := splitDebug(t, "")
	// Another build's debug info under the same name must not be used.
	other := tempCopy(t, fixture.C(t, "elf_target.c", "-O2", "-g"), "other")
	run(t, "objcopy", "--only-keep-debug", other, dbg)
	if _, err := Resolve(specs("elf_count"), Target{Exe: bin}); err == nil {
		t.Error("resolved through a debug file whose CRC does not match")
	}
}

func TestDebugBuildID(t *testing.T) {
	bin, dbg := splitDebug(t, "elsewhere")
	o, err := openObject(bin)
	if err != nil {
		t.Fatal(err)
	}
	id := buildID(o.elf)
	o.close()
	if len(id) == 0 {
		t.Skip("gcc here does not emit a build ID")
	}
	h := hex.EncodeToString(id)
	root := t.TempDir()
	old := debugRoot
	debugRoot = root
	t.Cleanup(func() { debugRoot = old })
	p := filepath.Join(root, ".build-id", h[:2], h[2:]+".debug")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dbg, p); err != nil {
		t.Fatal(err)
	}
	checkDebugSite(t, bin)
}
