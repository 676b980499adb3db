//go:build linux && amd64

package enginetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
)

// TestSyscallFdPathsColdPages (#25): -y names the fds, and a write()
// buffer in a .bss page nothing touched shows its bytes, on both engines.
// The fixture keeps its fds open until its stdin ends, which the test
// ends once the lines are out: the uprobe engine reads paths and pages
// after the call, while the process is there.
func TestSyscallFdPathsColdPages(t *testing.T) {
	need.Uprobes(t)
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	bin := fixture.C(t, "et_upitems.c")
	want := []string{`read(3</etc/hostname>, "`, `write(4</dev/null>, "\0\0\0\0\0\0\0\0", 8) = 8`}
	for _, b := range backends {
		out := filepath.Join(t.TempDir(), "out")
		cmd := exec.Command(utapBin, "run", "--backend", b.name, "-y", "-o", out, "-e", "trace=read,write", "--", bin, "fds")
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		text := waitFor(t, out, want[len(want)-1])
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%s: %v", b.name, err)
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: no %q in:\n%s", b.name, w, text)
			}
		}
	}
}

// waitFor is the file's text once it holds s; it fails after 30s.
func waitFor(t *testing.T, path, s string) string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), s) {
			return string(b)
		}
	}
	b, _ := os.ReadFile(path)
	t.Fatalf("no %q in 30s:\n%s", s, b)
	return ""
}

// TestSyscallGetdentsCount (#25): getdents64 counts every entry of the
// returned buffer, beyond what a record captures, on both engines.
func TestSyscallGetdentsCount(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.C(t, "et_upitems.c")
	dir := t.TempDir()
	const files = 400 // about 16 KiB of entries: one call, more than 8 KiB
	for i := range files {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("entry_%04d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := fmt.Sprintf("/* %d entries */", files+2) // and . and ..
	for _, b := range backends {
		r := utap(t, "run", "--backend", b.name, "-q", "-e", "trace=getdents64", "--", bin, "dents", dir)
		if r.code != 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d, no %q in:\n%s", b.name, r.code, want, r.stderr)
		}
	}
}
