//go:build linux && amd64

package elfsym

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
)

// TestSharedLibraryRunpath builds a library and an executable that finds
// it through DT_RUNPATH=$ORIGIN/lib, and resolves into the library by
// short name and by path before the program runs.
func TestSharedLibraryRunpath(t *testing.T) {
	dir := t.TempDir()
	lib := gcc(t, filepath.Join(dir, "lib", "libelf_lib.so"), "-shared", "-fPIC", "-g", "-O1", fixture.Source(t, "elf_lib.c"))
	exe := gcc(t, filepath.Join(dir, "uselib"), "-g", "-O1", fixture.Source(t, "elf_uselib.c"),
		"-L"+filepath.Dir(lib), "-lelf_lib", "-Wl,-rpath,$ORIGIN/lib")
	run(t, exe) // the loader agrees: it runs
	for _, text := range []string{"libelf_lib:elf_lib_twice", lib + ":elf_lib_twice"} {
		s := resolveOne(t, Target{Exe: exe}, text)
		if s.Object != lib || s.Addr != nmAddr(t, lib, "elf_lib_twice", false) {
			t.Errorf("%s: Object %s Addr %#x", text, s.Object, s.Addr)
		}
		if !reflect.DeepEqual(s.Params, []string{"value"}) {
			t.Errorf("%s: Params %q", text, s.Params)
		}
		checkSiteBytes(t, s)
	}
	// The executable calls it through its PLT.
	if s := resolveOne(t, Target{Exe: exe}, "elf_lib_twice@plt"); s.Object != exe {
		t.Errorf("PLT stub in %s", s.Object)
	}
	// The whole dependency tree: our library, libc, the loader.
	syms, err := List(Target{Exe: exe}, "")
	if err != nil {
		t.Fatal(err)
	}
	objs := map[string]bool{}
	for _, s := range syms {
		objs[filepath.Base(s.Object)] = true
	}
	for _, want := range []string{"uselib", "libelf_lib.so", "libc.so.6", "ld-linux-x86-64.so.2"} {
		if !objs[want] {
			t.Errorf("List: no symbols of %s (have %v)", want, objs)
		}
	}
}

func TestShortNames(t *testing.T) {
	for _, tc := range []struct {
		name, base string
		ok         bool
	}{
		{"libc", "libc.so.6", true},
		{"libc.so.6", "libc.so.6", true},
		{"libm", "libm.so.6", true},
		{"libpthread", "libpthread.so.0", true},
		{"libc", "libcrypt.so.1", false},
		{"lib", "libc.so.6", false},
		{"ls", "ls", true},
	} {
		if got := shortNameMatches(tc.name, tc.base); got != tc.ok {
			t.Errorf("shortNameMatches(%q, %q) = %v", tc.name, tc.base, got)
		}
	}
}

func TestLdCache(t *testing.T) {
	p := ldCache()["libc.so.6"]
	if !strings.HasSuffix(p, "/libc.so.6") {
		t.Errorf("ld.so.cache: libc.so.6 -> %q", p)
	}
}
