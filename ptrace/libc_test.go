//go:build linux && amd64

package ptrace

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/utap/utap/elfsym"
	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/internal/x86"
	"github.com/utap/utap/probe"
	"github.com/utap/utap/ssol"
)

// libcHot are hot libc functions probed on every instruction: strlen and
// memcpy (IFUNCs: the implementation the loader chose), and what printf
// calls (strchrnul to scan the format, mempcpy to fill the buffer).
var libcHot = []string{"strlen", "memcpy", "mempcpy", "strchrnul", "printf"}

// Every instruction of a few hot libc functions under a real program: the
// output is that of the untraced run, and every hit is reported: each
// function is entered as often as it leaves by its RETs.
func TestEveryInstructionLibc(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_libc.c", "-O1", "-fno-builtin")
	want, err := exec.Command(bin, "100").Output()
	if err != nil {
		t.Fatal(err)
	}
	var specs []*probe.Spec
	for _, fn := range libcHot {
		sp, err := probe.Parse("libc:" + fn)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, sp)
	}
	type fnInfo struct {
		name    string
		entry   string
		rets    []string
		refused []string
		n       int
	}
	var fns []*fnInfo
	resolve := func(pid int) ([]probe.Site, error) {
		base, err := elfsym.Resolve(specs, elfsym.Target{PID: pid})
		if err != nil {
			return nil, err
		}
		fns = nil
		var sites []probe.Site
		for _, s := range base {
			fi := &fnInfo{name: s.Func}
			fns = append(fns, fi)
			code, err := readFileAt(s.Object, s.FileOffset-(s.Addr-s.FuncAddr), int(s.FuncSize))
			if err != nil {
				return nil, err
			}
			for off := 0; off < len(code); {
				n, err := lenOf(code[off:])
				if err != nil {
					return nil, fmt.Errorf("%s+%#x: %w", s.Func, off, err)
				}
				is := s
				is.Spec = &probe.Spec{Text: fmt.Sprintf("%s+%#x", s.Func, off), Object: "libc", Symbol: s.Func, Offset: uint64(off)}
				is.Addr = s.FuncAddr + uint64(off)
				is.FileOffset = s.FileOffset - (s.Addr - s.FuncAddr) + uint64(off)
				is.Insn = code[off : off+n]
				is.Fetches, is.Cond = nil, nil
				insn := code[off:min(off+16, len(code))]
				if _, err := ssol.Analyze(insn, is.Addr); err != nil {
					// By design (syscall, and the like): listed, not probed.
					fi.refused = append(fi.refused, fmt.Sprintf("%s: %v", is.Spec.Text, err))
				} else {
					sites = append(sites, is)
					fi.n++
					if off == 0 {
						fi.entry = is.Spec.Text
					}
					if x86.IsRet(insn) {
						fi.rets = append(fi.rets, is.Spec.Text)
					}
				}
				off += n
			}
		}
		return sites, nil
	}
	var out bytes.Buffer
	hits := map[string]int{}
	res, err := (&Engine{}).Trace(context.Background(), probe.Target{Argv: []string{bin, "100"}, Stdout: &out, Resolve: resolve},
		nil, func(ev *probe.Event) { hits[ev.Probe]++ })
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || out.String() != string(want) {
		t.Fatalf("exit %d; output differs from the untraced run:\n%s", res.ExitCode, firstDiff(out.String(), string(want)))
	}
	if len(fns) != len(libcHot) {
		t.Fatalf("resolved %d functions, want %d", len(fns), len(libcHot))
	}
	total, reached, in, left := 0, 0, 0, 0
	for _, fi := range fns {
		for k, v := range hits {
			if strings.HasPrefix(k, fi.name+"+") {
				total += v
				reached++
			}
		}
		calls := hits[fi.entry]
		t.Logf("%s: %d instructions probed, %d calls; refused: %v", fi.name, fi.n, calls, fi.refused)
		if calls == 0 || fi.entry == "" {
			t.Errorf("%s: never entered", fi.name)
		}
		if fi.name == "printf" {
			continue // its callee is not probed: it may return through it
		}
		// mempcpy's entry jumps into memcpy's body and leaves by its RETs:
		// count over the string functions together.
		in += calls
		for _, r := range fi.rets {
			left += hits[r]
		}
	}
	if in != left {
		t.Errorf("the string functions were entered %d times and left by their RETs %d times", in, left)
	}
	t.Logf("%d events at %d distinct instructions", total, reached)
}

func readFileAt(path string, off uint64, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	_, err = f.ReadAt(b, int64(off))
	return b, err
}

// firstDiff shows where two outputs part.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d: got %q, want %q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("got %d lines, want %d", len(g), len(w))
}
