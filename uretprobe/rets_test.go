package uretprobe

import (
	"debug/elf"
	"debug/gosym"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/internal/x86"
)

func TestRetSitesForms(t *testing.T) {
	code := []byte{
		0xf3, 0x0f, 0x1e, 0xfa, // endbr64
		0x55,             // push rbp
		0xc3,             // ret          5
		0xc2, 0x10, 0x00, // ret 0x10     6
		0xf3, 0xc3, // rep ret      9
		0xf2, 0xc3, // bnd ret      11
		0x66, 0xc3, // retw: 16-bit, not a near return of ours
		0xcb,                         // lret (far)
		0xb8, 0xc3, 0xc3, 0xc3, 0xc3, // mov eax, 0xc3c3c3c3: no RET inside
		0xc3, // ret 21
	}
	got, err := RetSites(code, 0x1000)
	if err != nil {
		t.Fatal(err)
	}
	want := []uint64{0x1005, 0x1006, 0x1009, 0x100b, 0x1015}
	if fmt.Sprintf("%#x", got) != fmt.Sprintf("%#x", want) {
		t.Errorf("RetSites = %#x, want %#x", got, want)
	}
}

func TestRetSitesRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		code []byte
		at   string
	}{
		{"invalid in 64-bit mode", []byte{0x55, 0xc3, 0x06, 0xc3}, "0x2002"},         // push es
		{"truncated", []byte{0x55, 0xb8, 0x01, 0x02}, "0x2001"},                      // mov eax, imm32 cut
		{"undecodable prefix", []byte{0xc3, 0xf3, 0x48, 0x0f, 0x1e, 0xc8}, "0x2001"}, // rdsspq
	} {
		t.Run(tc.name, func(t *testing.T) {
			rets, err := RetSites(tc.code, 0x2000)
			if !errors.Is(err, ErrRefused) || !errors.Is(err, x86.ErrDecode) || rets != nil {
				t.Fatalf("RetSites = %v, %v; want a refusal", rets, err)
			}
			if !strings.Contains(err.Error(), tc.at) {
				t.Errorf("error %q does not name %s", err, tc.at)
			}
			t.Log(err)
		})
	}
}

// objdumpRets lists the addresses of near returns objdump finds in path.
func objdumpRets(t *testing.T, path string) map[uint64]bool {
	t.Helper()
	need.Tool(t, "objdump")
	out, err := exec.Command("objdump", "-d", "--no-show-raw-insn", "-j", ".text", path).Output()
	if err != nil {
		t.Fatalf("objdump: %v", err)
	}
	rets := map[uint64]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		addr, insn, ok := strings.Cut(line, ":\t")
		if !ok {
			continue
		}
		a, err := strconv.ParseUint(strings.TrimSpace(addr), 16, 64)
		if err != nil {
			continue
		}
		f := strings.Fields(insn)
		for len(f) > 1 && (f[0] == "repz" || f[0] == "rep" || f[0] == "bnd" || f[0] == "notrack") {
			f = f[1:]
		}
		if len(f) > 0 && (f[0] == "ret" || f[0] == "retq") {
			rets[a] = true
		}
	}
	return rets
}

type function struct {
	name       string
	start, end uint64
}

// checkRetSites runs RetSites on every function and compares with objdump.
func checkRetSites(t *testing.T, path string, funcs []function) (nfuncs, nrets int) {
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	text := f.Section(".text")
	data, err := text.Data()
	if err != nil {
		t.Fatal(err)
	}
	want := objdumpRets(t, path)
	for _, fn := range funcs {
		if fn.start < text.Addr || fn.end > text.Addr+text.Size || fn.end <= fn.start {
			continue
		}
		got, err := RetSites(data[fn.start-text.Addr:fn.end-text.Addr], fn.start)
		if err != nil {
			t.Errorf("%s: %v", fn.name, err)
			continue
		}
		var exp []uint64
		for a := fn.start; a < fn.end; a++ {
			if want[a] {
				exp = append(exp, a)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(exp) {
			t.Errorf("%s: RetSites %#x, objdump %#x", fn.name, got, exp)
		}
		nfuncs++
		nrets += len(got)
	}
	return nfuncs, nrets
}

func TestRetSitesC(t *testing.T) {
	for _, flags := range [][]string{{"-O0", "-g"}, {"-O2", "-g"}, {"-O2", "-fcf-protection=full"}, {"-Os"}} {
		t.Run(strings.Join(flags, ""), func(t *testing.T) {
			path := fixture.C(t, "ret_c.c", flags...)
			f, err := elf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			syms, err := f.Symbols()
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			var funcs []function
			for _, s := range syms {
				if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Size > 0 {
					funcs = append(funcs, function{s.Name, s.Value, s.Value + s.Size})
				}
			}
			n, r := checkRetSites(t, path, funcs)
			if n < 6 || r < 6 {
				t.Errorf("only %d functions, %d returns checked", n, r)
			}
		})
	}
}

func TestRetSitesGo(t *testing.T) {
	path := fixture.Go(t, "ret_go")
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	pcln, err := f.Section(".gopclntab").Data()
	if err != nil {
		t.Fatal(err)
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(pcln, f.Section(".text").Addr))
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	// Every function of the binary, runtime assembly included.
	var funcs []function
	seen := map[string]bool{}
	for _, fn := range tab.Funcs {
		funcs = append(funcs, function{fn.Name, fn.Entry, fn.End})
		seen[fn.Name] = true
	}
	for _, name := range []string{"main.classify", "main.fib", "main.deep"} {
		if !seen[name] {
			t.Errorf("%s not in the pclntab", name)
		}
	}
	n, r := checkRetSites(t, path, funcs)
	t.Logf("%d Go functions, %d returns", n, r)
}

func TestCallsItself(t *testing.T) {
	for _, tc := range []struct {
		code []byte
		want bool
	}{
		{[]byte{0x55, 0xe8, 0xfa, 0xff, 0xff, 0xff, 0x5d, 0xc3}, true},  // push rbp; call start; pop rbp; ret
		{[]byte{0x55, 0xe8, 0x00, 0x00, 0x00, 0x00, 0x5d, 0xc3}, false}, // a call to the next instruction
		{[]byte{0xe9, 0xfb, 0xff, 0xff, 0xff}, false},                   // a jump to the start is a loop
	} {
		if got := callsItself(tc.code, 0x1000); got != tc.want {
			t.Errorf("% x: %v, want %v", tc.code, got, tc.want)
		}
	}
}
