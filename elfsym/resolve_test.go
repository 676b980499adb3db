//go:build linux && amd64

package elfsym

import (
	"errors"
	"os"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/probe"
)

func TestResolvePIE(t *testing.T) {
	bin := fixture.C(t, "elf_target.c")
	s := resolveOne(t, Target{Exe: bin}, "elf_add")
	if want := nmAddr(t, bin, "elf_add", false); s.Addr != want || s.FuncAddr != want {
		t.Errorf("Addr %#x FuncAddr %#x, want %#x", s.Addr, s.FuncAddr, want)
	}
	if s.Func != "elf_add" || s.FuncSize == 0 || s.ABI != probe.ABISysV || s.GoFunc {
		t.Errorf("site %+v", s)
	}
	if !reflect.DeepEqual(s.Params, []string{"first", "second"}) {
		t.Errorf("Params %q", s.Params)
	}
	checkSiteBytes(t, s)
}

func TestResolveNonPIE(t *testing.T) {
	bin := fixture.C(t, "elf_target.c", "-O1", "-g", "-no-pie")
	s := resolveOne(t, Target{Exe: bin}, "elf_greet")
	if want := nmAddr(t, bin, "elf_greet", false); s.Addr != want || want < 0x400000 {
		t.Errorf("Addr %#x, want %#x (non-PIE)", s.Addr, want)
	}
	if !reflect.DeepEqual(s.Params, []string{"name"}) {
		t.Errorf("Params %q", s.Params)
	}
	checkSiteBytes(t, s)
}

func TestResolveStatic(t *testing.T) {
	bin := fixture.C(t, "elf_target.c", "-O1", "-g", "-static")
	for _, text := range []string{"elf_add", "malloc", "puts"} {
		s := resolveOne(t, Target{Exe: bin}, text)
		checkSiteBytes(t, s)
	}
}

// TestResolveStripped resolves through .dynsym only (-rdynamic exports
// the functions) and still finds the PLT stubs.
func TestResolveStripped(t *testing.T) {
	bin := tempCopy(t, fixture.C(t, "elf_target.c", "-O1", "-g", "-rdynamic"), "stripped")
	want := nmAddr(t, bin, "elf_add", false)
	run(t, "strip", bin)
	s := resolveOne(t, Target{Exe: bin}, "elf_add")
	if s.Addr != want || s.Params != nil {
		t.Errorf("Addr %#x (want %#x) Params %q (want none)", s.Addr, want, s.Params)
	}
	checkSiteBytes(t, s)
	p := resolveOne(t, Target{Exe: bin}, "puts@plt")
	if want := objdumpPLT(t, bin)["puts@plt"]; p.Addr != want {
		t.Errorf("puts@plt at %#x, objdump says %#x", p.Addr, want)
	}
	// elf_count is static: gone with .symtab.
	if _, err := Resolve([]*probe.Spec{spec("elf_count")}, Target{Exe: bin}); !errors.Is(err, ErrNoSymbol) {
		t.Errorf("static function in a stripped binary: %v, want ErrNoSymbol", err)
	}
}

func TestGlobDedupesAliases(t *testing.T) {
	bin := fixture.C(t, "elf_target.c")
	sites, err := Resolve([]*probe.Spec{spec("elf_*")}, Target{Exe: bin})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range sites {
		names = append(names, s.Func)
	}
	sort.Strings(names)
	// elf_add_alias shares elf_add's address: one site, the shorter name.
	if !reflect.DeepEqual(names, []string{"elf_add", "elf_count", "elf_greet"}) {
		t.Errorf("sites %q", names)
	}
	for i, s := range sites {
		if s.Probe != 0 || s.Spec == nil {
			t.Errorf("site %d: Probe %d Spec %v", i, s.Probe, s.Spec)
		}
	}
}

func TestParams(t *testing.T) {
	bin := fixture.C(t, "elf_target.c")
	for text, want := range map[string][]string{
		"elf_count": {"text", "ch"},
		"elf_greet": {"name"},
		"main":      {"argc", "argv"},
	} {
		if s := resolveOne(t, Target{Exe: bin}, text); !reflect.DeepEqual(s.Params, want) {
			t.Errorf("%s: Params %q, want %q", text, s.Params, want)
		}
	}
}

func TestSymbolOffset(t *testing.T) {
	bin := fixture.C(t, "elf_target.c")
	fn := resolveOne(t, Target{Exe: bin}, "elf_greet")
	n := uint64(len(fn.Insn))
	s := resolveOne(t, Target{Exe: bin}, "elf_greet+"+hexs(n))
	if s.Addr != fn.Addr+n || s.FuncAddr != fn.Addr || s.Func != "elf_greet" {
		t.Errorf("elf_greet+%d: %+v", n, s)
	}
	checkSiteBytes(t, s)
	// The same place as a bare address names the covering function.
	a := resolveOne(t, Target{Exe: bin}, hexs(fn.Addr+n))
	if a.Addr != s.Addr || a.Func != "elf_greet" || !reflect.DeepEqual(a.Insn, s.Insn) {
		t.Errorf("bare address: %+v", a)
	}
}

func TestNotBoundary(t *testing.T) {
	bin := fixture.C(t, "elf_target.c")
	// Find the first instruction of elf_greet longer than one byte.
	var off uint64
	var insn []byte
	for {
		s := resolveOne(t, Target{Exe: bin}, "elf_greet+"+hexs(off))
		if insn = s.Insn; len(insn) > 1 {
			break
		}
		off += uint64(len(insn))
	}
	text := "elf_greet+" + hexs(off+1)
	_, err := Resolve([]*probe.Spec{spec(text)}, Target{Exe: bin})
	if !errors.Is(err, ErrNotBoundary) {
		t.Fatalf("%s: %v, want ErrNotBoundary", text, err)
	}
	want := `spec "` + text + `": ` + text + ` is not an instruction boundary: it falls inside the ` +
		itoa(len(insn)) + `-byte instruction at elf_greet+` + hexs(off) + `; the nearest boundaries are elf_greet+` +
		hexs(off) + ` and elf_greet+` + hexs(off+uint64(len(insn)))
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}
	// The same through a bare address.
	fn := resolveOne(t, Target{Exe: bin}, "elf_greet")
	if _, err := Resolve([]*probe.Spec{spec(hexs(fn.Addr + off + 1))}, Target{Exe: bin}); !errors.Is(err, ErrNotBoundary) {
		t.Errorf("bare address inside an instruction: %v", err)
	}
}

func TestErrors(t *testing.T) {
	bin := fixture.C(t, "elf_target.c")
	exe := Target{Exe: bin}
	libc := Target{Exe: "/bin/ls"}
	libcPath := resolveOne(t, libc, "libc:malloc").Object
	for _, tc := range []struct {
		tgt      Target
		spec     string
		sentinel error
		msg      string
	}{
		{libc, "libc:nosuch", ErrNoSymbol,
			`spec "libc:nosuch": no function matches "nosuch" in ` + libcPath + ` (try: utap list ` + libcPath + ` '*nosuch*')`},
		{exe, "malloc", ErrNoSymbol,
			`spec "malloc": no function matches "malloc" in ` + bin + ` (it is in ` + libcPath + `: try libc:malloc)`},
		{exe, "nolib:foo", ErrNoObject, `spec "nolib:foo": no object "nolib" among `},
		{exe, "/nonexistent/lib.so:foo", ErrNoObject, `spec "/nonexistent/lib.so:foo": /nonexistent/lib.so does not exist`},
		{Target{Exe: "/etc/passwd"}, "foo", ErrNotELF, `"/etc/passwd" is not an ELF file`},
		{Target{Exe: "/nonexistent"}, "foo", ErrNoObject, `/nonexistent does not exist`},
		{Target{PID: 999999}, "foo", ErrNoProcess, `process 999999 does not exist`},
		{exe, "elf_add+0x100000", nil, `spec "elf_add+0x100000": elf_add+0x100000 is beyond the end of elf_add`},
		{exe, "elf_[", nil, `spec "elf_[": bad pattern "elf_[": syntax error in pattern`},
		{exe, "0x1", nil, `spec "0x1": address 0x1 is not in an executable segment of ` + bin},
	} {
		_, err := Resolve([]*probe.Spec{spec(tc.spec)}, tc.tgt)
		if err == nil {
			t.Errorf("%s: no error", tc.spec)
			continue
		}
		if tc.sentinel != nil && !errors.Is(err, tc.sentinel) {
			t.Errorf("%s: %v does not wrap %v", tc.spec, err, tc.sentinel)
		}
		if !strings.HasPrefix(err.Error(), tc.msg) {
			t.Errorf("%s: error\n%s\nwant\n%s", tc.spec, err, tc.msg)
		}
	}
}

func hexs(v uint64) string { return "0x" + strconvHex(v) }

func TestProcErrorHints(t *testing.T) {
	err := proc.Error(1, "/proc/PID/maps", &os.PathError{Op: "open", Path: "/proc/1/maps", Err: syscall.EACCES})
	want := "reading /proc/PID/maps of process 1: open /proc/1/maps: permission denied (run as root or grant CAP_SYS_PTRACE)"
	if err.Error() != want || !errors.Is(err, syscall.EACCES) {
		t.Errorf("got %q, want %q", err, want)
	}
}
