//go:build linux && amd64

package elfsym

import (
	"reflect"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/probe"
	"golang.org/x/arch/x86/x86asm"
)

func TestGoFunctions(t *testing.T) {
	for name, flags := range map[string][]string{
		"normal":   nil,
		"stripped": {"-ldflags=-s -w"},
		"pie":      {"-buildmode=pie"},
	} {
		t.Run(name, func(t *testing.T) {
			bin := fixture.Go(t, "elf_gohello", flags...)
			for fn, params := range map[string][]string{
				"main.Add":   {"first", "second"},
				"main.Greet": {"name"},
				"main.Big":   {"n"},
			} {
				s := resolveOne(t, Target{Exe: bin}, fn)
				if !s.GoFunc || s.ABI != probe.ABIGoRegs || s.FuncSize == 0 {
					t.Errorf("%s: %+v", fn, s)
				}
				checkSiteBytes(t, s)
				if fn == "main.Add" {
					// A leaf without a frame has no stack check.
					if s.Addr != s.FuncAddr {
						t.Errorf("main.Add: entry at +%#x, want +0", s.Addr-s.FuncAddr)
					}
				} else {
					checkAfterStackCheck(t, s)
				}
				if name != "stripped" && !reflect.DeepEqual(s.Params, params) {
					t.Errorf("%s: Params %q, want %q", fn, s.Params, params)
				}
				// A return probe, or an explicit +0, stays at the start.
				r := spec(fn)
				r.Kind = probe.Return
				rs, err := Resolve([]*probe.Spec{r}, Target{Exe: bin})
				if err != nil || rs[0].Addr != s.FuncAddr {
					t.Errorf("%s return: %v %+v", fn, err, rs)
				}
			}
		})
	}
}

// checkAfterStackCheck checks that the entry site of a Go function comes
// right after a jbe that ends its stack-split check.
func checkAfterStackCheck(t *testing.T, s probe.Site) {
	t.Helper()
	o, err := openObject(s.Object)
	if err != nil {
		t.Fatal(err)
	}
	defer o.close()
	code, err := o.codeAt(s.FuncAddr, s.Addr-s.FuncAddr)
	if err != nil {
		t.Fatal(err)
	}
	var last x86asm.Inst
	for pc := 0; pc < len(code); pc += last.Len {
		if last, err = x86asm.Decode(code[pc:], 64); err != nil {
			t.Fatal(err)
		}
	}
	if s.Addr == s.FuncAddr || last.Op != x86asm.JBE {
		t.Errorf("%s: entry at +%#x, after %v (want after the stack check's jbe)", s.Func, s.Addr-s.FuncAddr, last)
	}
}
