//go:build linux && amd64

package elfsym

import (
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/proc"
)

// TestIFUNC: before the process runs, libc:strlen is the IFUNC resolver
// (listed as kind "ifunc"); in a running process it is the implementation
// the loader picked, and the process holds the site's bytes there.
func TestIFUNC(t *testing.T) {
	bin := fixture.C(t, "elf_target.c")
	before := resolveOne(t, Target{Exe: bin}, "libc:strlen")
	syms, err := List(Target{Exe: bin}, "libc.so.6:strlen")
	if err != nil || len(syms) != 1 || syms[0].Kind != "ifunc" || syms[0].Addr != before.Addr {
		t.Fatalf("List(libc:strlen) = %+v, %v", syms, err)
	}
	pid := startSleeper(t, bin)
	after := resolveOne(t, Target{PID: pid}, "libc:strlen")
	if after.Addr == before.Addr || after.Func != "strlen" {
		t.Errorf("running: strlen at %#x, resolver at %#x", after.Addr, before.Addr)
	}
	maps, err := proc.Maps(pid)
	if err != nil {
		t.Fatal(err)
	}
	checkRuntimeBytes(t, pid, maps, after)
	t.Logf("strlen: resolver %#x, implementation %#x (%d bytes)", before.Addr, after.Addr, after.FuncSize)
}

// TestDefaultVersionOnly: libc exports memcpy twice (memcpy@GLIBC_2.2.5,
// a compatibility alias of memmove, and memcpy@@GLIBC_2.14); the spec
// means the default one.
func TestDefaultVersionOnly(t *testing.T) {
	sites, err := Resolve(specs("libc:memcpy"), Target{Exe: "/bin/ls"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sites) != 1 {
		t.Errorf("libc:memcpy: %d sites", len(sites))
	}
}

// TestIFUNCAliasesOneSite: in a running process memcpy and memmove (two
// IFUNCs) resolve to one implementation; a pattern naming both gives
// one site there, as it gives one for aliases (ltrace keeps one symbol
// an address), not two probes at one address.
func TestIFUNCAliasesOneSite(t *testing.T) {
	bin := fixture.C(t, "elf_target.c")
	pid := startSleeper(t, bin)
	sites, err := Resolve(specs("libc:mem*"), Target{PID: pid})
	if err != nil {
		t.Fatal(err)
	}
	at := map[uint64]string{}
	for _, s := range sites {
		if f, ok := at[s.Addr]; ok {
			t.Errorf("%s and %s: both at %#x", f, s.Func, s.Addr)
		}
		at[s.Addr] = s.Func
	}
	if len(sites) < 5 {
		t.Errorf("libc:mem*: %d sites", len(sites))
	}
}

// TestIFuncImpls: libc's strlen and memmove resolvers take the address
// of each implementation they may pick; the one the loader picked in a
// running process is among them.
func TestIFuncImpls(t *testing.T) {
	bin := fixture.C(t, "elf_target.c")
	pid := startSleeper(t, bin)
	for _, fn := range []string{"strlen", "memmove"} {
		before := resolveOne(t, Target{Exe: bin}, "libc:"+fn)
		impls, ok := IFuncImpls(before.Object, before.FuncAddr, before.FuncSize)
		if !ok || len(impls) < 2 {
			t.Fatalf("%s: %d implementations (%v)", fn, len(impls), ok)
		}
		after := resolveOne(t, Target{PID: pid}, "libc:"+fn)
		found := false
		for _, s := range impls {
			found = found || s.Addr == after.FuncAddr
		}
		if !found {
			t.Errorf("%s: the loader's pick at %#x is not among %+v", fn, after.FuncAddr, impls)
		}
		t.Logf("%s: %d implementations", fn, len(impls))
	}
}
