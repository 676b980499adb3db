//go:build linux && amd64

package elfsym

import (
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// readelfNotes lists bin's static probes as readelf -n shows them: an
// independent reading of the notes to check ours against.
func readelfNotes(t *testing.T, bin string) []stapNote {
	t.Helper()
	var out []stapNote
	for _, line := range strings.Split(run(t, "readelf", "-n", bin), "\n") {
		line = strings.TrimSpace(line)
		key, val, _ := strings.Cut(line, ": ")
		switch key {
		case "Provider":
			out = append(out, stapNote{Provider: val})
		case "Name":
			out[len(out)-1].Name = val
		case "Location":
			n := &out[len(out)-1]
			for _, kv := range strings.Split(line, ", ") {
				k, v, _ := strings.Cut(kv, ": ")
				a, err := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 64)
				if err != nil {
					t.Fatalf("readelf line %q: %v", line, err)
				}
				switch k {
				case "Location":
					n.PC = a
				case "Base":
					n.Base = a
				case "Semaphore":
					n.Semaphore = a
				}
			}
		case "Arguments", "Arguments:":
			out[len(out)-1].Args = val
		}
	}
	return out
}

func resolveSpecs(t *testing.T, tgt Target, texts ...string) ([]probe.Site, error) {
	t.Helper()
	var specs []*probe.Spec
	for _, text := range texts {
		s, err := probe.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, s)
	}
	return Resolve(specs, tgt)
}

// sectionOffset is the file offset of a link-time address through its
// section header (not the program headers elfsym uses).
func sectionOffset(t *testing.T, bin string, addr uint64) uint64 {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, s := range f.Sections {
		if s.Type == elf.SHT_PROGBITS && addr >= s.Addr && addr < s.Addr+s.Size {
			return addr - s.Addr + s.Offset
		}
	}
	t.Fatalf("%s: no section holds %#x", bin, addr)
	return 0
}

// TestResolveUSDTFixture resolves every probe of the fixture, as a PIE and
// as a fixed-address executable, and checks each site against readelf.
func TestResolveUSDTFixture(t *testing.T) {
	need.Tool(t, "readelf")
	for _, flags := range [][]string{{"-O1", "-g"}, {"-O1", "-g", "-no-pie"}, {"-O0", "-g"}} {
		bin := fixture.C(t, "usdt_fixture.c", flags...)
		t.Run(strings.Join(flags, " "), func(t *testing.T) {
			notes := readelfNotes(t, bin)
			sites, err := resolveSpecs(t, Target{Exe: bin}, "usdt:fixture:*")
			if err != nil {
				t.Fatal(err)
			}
			if len(sites) != len(notes) || len(sites) != 10 {
				t.Fatalf("%d sites, readelf shows %d notes, want 10", len(sites), len(notes))
			}
			wantArgs := map[string]int{"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "twice": 1, "guarded": 1}
			twice := map[uint64]bool{}
			for i, s := range sites {
				n := notes[i]
				if s.Func != n.Provider+":"+n.Name || s.Addr != n.PC || s.FuncAddr != s.Addr || !s.USDT || s.Object != bin {
					t.Errorf("site %d: %s at %#x, readelf: %s:%s at %#x", i, s.Func, s.Addr, n.Provider, n.Name, n.PC)
				}
				if s.Insn[0] != 0x90 {
					t.Errorf("%s: instruction % x, want a nop", s.Func, s.Insn)
				}
				checkSiteBytes(t, s)
				if len(s.Args) != wantArgs[n.Name] || strings.Join(s.Operands, " ") != n.Args {
					t.Errorf("%s: %d args %q, want %d (%s)", s.Func, len(s.Args), s.Operands, wantArgs[n.Name], n.Args)
				}
				for j, a := range s.Args {
					if a == nil {
						t.Errorf("%s: arg%d (%s): %v", s.Func, j+1, s.Operands[j], s.ArgErrs[j])
					}
				}
				// No fetches given: every argument is fetched.
				if len(s.Fetches) != len(s.Args) || len(s.Args) > 0 && s.Fetches[len(s.Args)-1].Text != "arg"+itoa(len(s.Args)) {
					t.Errorf("%s: fetches %+v", s.Func, s.Fetches)
				}
				switch n.Name {
				case "twice":
					twice[s.Addr] = true
				case "guarded":
					sem := nmAddr(t, bin, "fixture_guarded_semaphore", false)
					if s.Semaphore != sem || n.Semaphore != sem || s.SemaphoreOffset != sectionOffset(t, bin, sem) {
						t.Errorf("guarded: semaphore %#x at offset %#x, want %#x at %#x", s.Semaphore, s.SemaphoreOffset, sem, sectionOffset(t, bin, sem))
					}
				default:
					if s.Semaphore != 0 || s.SemaphoreOffset != 0 {
						t.Errorf("%s: semaphore %#x", s.Func, s.Semaphore)
					}
				}
			}
			if len(twice) != 2 {
				t.Errorf("fixture:twice at %v, want two addresses", twice)
			}
		})
	}
}

func TestResolveUSDTErrors(t *testing.T) {
	bin := fixture.C(t, "usdt_fixture.c", "-O1", "-g")
	plain := fixture.C(t, "cli_work.c")
	for _, tt := range []struct {
		tgt      Target
		spec     string
		sentinel error
		want     string
	}{
		{Target{Exe: bin}, "usdt:fixture:nosuch", ErrNoSymbol, "no USDT probe matches fixture:nosuch in " + bin + " (it has fixture:zero, fixture:one, fixture:two"},
		{Target{Exe: bin}, "usdt:other:*", ErrNoSymbol, "no USDT probe matches other:*"},
		{Target{Exe: plain}, "usdt:fixture:one", ErrNoUSDT, plain + " has no USDT probes (.note.stapsdt)"},
		{Target{Exe: bin}, "usdt:fixture:one(arg2)", probe.ErrNoParam, "no arg2: fixture:one has 1 argument (-4@%edi)"},
		{Target{Exe: bin}, "usdt:fixture:zero if arg1", probe.ErrNoParam, "fixture:zero has no arguments"},
		{Target{Exe: bin}, "usdt:fixture:two(msg)", probe.ErrNoParam, "a USDT probe has no parameter names"},
	} {
		_, err := resolveSpecs(t, tt.tgt, tt.spec)
		if err == nil || !strings.Contains(err.Error(), tt.want) || tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
			t.Errorf("%s: error %v, want %q (%v)", tt.spec, err, tt.want, tt.sentinel)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error spans lines", tt.spec)
		}
	}
	// Fetches and conditions bind to the operands' own types.
	sites, err := resolveSpecs(t, Target{Exe: bin}, "usdt:fixture:two(str(arg1), arg2) if arg2 < 0")
	if err != nil {
		t.Fatal(err)
	}
	if got := sites[0].Fetches[0].Expr.String(); got != "str(%rsi)" {
		t.Errorf("str(arg1) bound to %s", got)
	}
	if !sites[0].Fetches[1].Expr.Type().Signed {
		t.Errorf("arg2 (-4@...) is unsigned: %s", sites[0].Fetches[1].Expr)
	}
}

// TestResolveUSDTLibrary resolves the probes of a shared library by short
// name and by path, and points at the library when no object is named.
func TestResolveUSDTLibrary(t *testing.T) {
	dir := t.TempDir()
	lib := gcc(t, filepath.Join(dir, "lib", "libusdt_lib.so"), "-shared", "-fPIC", "-g", "-O1", fixture.Source(t, "usdt_lib.c"))
	exe := gcc(t, filepath.Join(dir, "usdt_main"), "-g", "-O1", "-DUSDT_LIB", fixture.Source(t, "usdt_fixture.c"),
		"-L"+filepath.Dir(lib), "-lusdt_lib", "-Wl,-rpath,$ORIGIN/lib")
	run(t, exe)
	for _, text := range []string{"usdt:libusdt_lib:usdtlib:step", "usdt:" + lib + ":usdtlib:step"} {
		sites, err := resolveSpecs(t, Target{Exe: exe}, text)
		if err != nil {
			t.Fatal(err)
		}
		s := sites[0]
		if len(sites) != 1 || s.Object != lib || s.Func != "usdtlib:step" || len(s.Args) != 2 {
			t.Fatalf("%s: %+v", text, sites)
		}
		checkSiteBytes(t, s)
		sem := nmAddr(t, lib, "usdtlib_step_semaphore", false)
		if s.Semaphore != sem || s.SemaphoreOffset != sectionOffset(t, lib, sem) {
			t.Errorf("%s: semaphore %#x at %#x, want %#x", text, s.Semaphore, s.SemaphoreOffset, sem)
		}
	}
	// -8@total(%rip): total's offset from the probe, right at any bias.
	sites, err := resolveSpecs(t, Target{Exe: exe}, "usdt:libusdt_lib:usdtlib:ready")
	if err != nil {
		t.Fatal(err)
	}
	off := nmAddr(t, lib, "total", false) - sites[0].Addr
	if got, want := sites[0].Args[0].String(), "(*(s64*)(%rip + "+strconv.FormatUint(off, 10)+"))"; got != want {
		t.Errorf("usdtlib:ready arg1 = %s, want %s", got, want)
	}
	_, err = resolveSpecs(t, Target{Exe: exe}, "usdt:usdtlib:step")
	if err == nil || !strings.Contains(err.Error(), "it is in "+lib+", try usdt:libusdt_lib:usdtlib:step") {
		t.Errorf("no hint at the library: %v", err)
	}
}

// TestResolveUSDTPython resolves Debian's python3.11 probes (installed by
// .ci/run).
func TestResolveUSDTPython(t *testing.T) {
	const py = "/usr/bin/python3.11"
	if _, err := os.Stat(py); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %s is missing (.ci/run installs python3.11-minimal)", py)
		}
		t.Skipf("%s is not installed", py)
	}
	if _, err := exec.LookPath("readelf"); err != nil {
		t.Skip("no readelf")
	}
	sites, err := resolveSpecs(t, Target{Exe: py}, "usdt:python:function__entry(str(arg1), str(arg2), arg3) if arg3 > 10",
		"usdt:"+py+":python:gc__start(arg1)", "usdt:python:*")
	if err != nil {
		t.Fatal(err)
	}
	notes := readelfNotes(t, py)
	if len(sites) != 2+len(notes) {
		t.Fatalf("%d sites, want %d", len(sites), 2+len(notes))
	}
	for _, s := range sites {
		checkSiteBytes(t, s)
		if s.Semaphore == 0 || s.SemaphoreOffset == 0 {
			t.Errorf("%s: no semaphore", s.Func)
		}
	}
	if s := sites[0]; s.Func != "python:function__entry" || len(s.Fetches) != 3 || !s.Fetches[2].Expr.Type().Signed {
		t.Errorf("function__entry: %+v", s)
	}
	_, err = resolveSpecs(t, Target{Exe: py}, "usdt:python:gc__start(arg2)")
	if err == nil || !strings.Contains(err.Error(), "python:gc__start has 1 argument") {
		t.Errorf("gc__start(arg2): %v", err)
	}
}

// TestListUSDT lists static probes beside functions, by provider:name, by
// name, and alone with "usdt:".
func TestListUSDT(t *testing.T) {
	bin := fixture.C(t, "usdt_fixture.c", "-O1", "-g")
	for _, tt := range []struct {
		pattern string
		want    []string // names
	}{
		{"fixture:t*", []string{"fixture:two", "fixture:three", "fixture:twice", "fixture:twice"}},
		{"guarded", []string{"fixture:guarded"}},
		{"usdt:*:s*", []string{"fixture:six"}},
		{"usdt:" + bin + ":fixture:one", []string{"fixture:one"}},
		{"fire", []string{"fire"}},
	} {
		syms, err := List(Target{Exe: bin}, tt.pattern)
		if err != nil {
			t.Fatalf("%s: %v", tt.pattern, err)
		}
		var names []string
		for _, s := range syms {
			names = append(names, s.Name)
			if s.Kind == "usdt" && (s.Addr == 0 || s.Object != bin) {
				t.Errorf("%s: %+v", tt.pattern, s)
			}
		}
		if strings.Join(names, " ") != strings.Join(tt.want, " ") {
			t.Errorf("%s: %q, want %q", tt.pattern, names, tt.want)
		}
	}
	syms, err := List(Target{Exe: bin}, "fixture:guarded")
	if err != nil || len(syms) != 1 || syms[0].Kind != "usdt" || syms[0].Semaphore != nmAddr(t, bin, "fixture_guarded_semaphore", false) ||
		strings.Join(syms[0].Args, " ") != "-4@%edi" {
		t.Errorf("fixture:guarded: %+v, %v", syms, err)
	}
	if _, err := List(Target{Exe: bin}, "nosuch:x"); err != nil {
		t.Errorf("nosuch:x: %v, want no error and nothing listed", err)
	}
}
