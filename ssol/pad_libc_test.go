//go:build linux && amd64

package ssol

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/utap/utap/internal/x86"
)

// TestPadLibc plans a pad at every function entry of the system libc (and
// at every instruction of its small functions), relocates the accepted ones
// 1 MiB past the function and checks the code (checkCode). It logs the
// acceptance rates and the refusal reasons.
func TestPadLibc(t *testing.T) {
	if _, err := os.Stat(libcPath); err != nil {
		t.Skipf("no %s", libcPath)
	}
	f, err := elf.Open(libcPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	if more, err := f.Symbols(); err == nil {
		syms = append(syms, more...)
	}
	// Every symbol's start must stay reachable: report them busy.
	starts := map[uint64]bool{}
	funcs := map[uint64]elf.Symbol{} // by address: aliases once
	for _, s := range syms {
		typ := elf.ST_TYPE(s.Info)
		if s.Section == elf.SHN_UNDEF || (typ != elf.STT_FUNC && typ != elf.STT_GNU_IFUNC) {
			continue
		}
		starts[s.Value] = true
		if typ == elf.STT_FUNC && s.Size > 0 {
			funcs[s.Value] = s
		}
	}
	busy := func(a uint64) bool { return starts[a] }
	addrs := make([]uint64, 0, len(funcs))
	for a := range funcs {
		addrs = append(addrs, a)
	}
	sort.Slice(addrs, func(i, j int) bool { return addrs[i] < addrs[j] })

	var entries, mid tally
	for _, a := range addrs {
		s := funcs[a]
		fn := symCode(t, f, s)
		if fn == nil {
			continue
		}
		at := a + s.Size + 1<<20
		entries.add(t, fn, a, a, at, busy)
		if s.Size > 256 {
			continue // a mid-function PlanPad walks the whole function
		}
		for off := 0; off < len(fn); {
			n, err := x86.Len(fn[off:])
			if err != nil {
				break
			}
			if off > 0 {
				mid.add(t, fn, a, a+uint64(off), at, busy)
			}
			off += n
		}
	}
	t.Logf("%s: %d functions; entries: %s", libcPath, len(addrs), &entries)
	t.Logf("instructions after the entry of functions up to 256 bytes: %s", &mid)
	if entries.n < 1000 || entries.ok*2 < entries.n {
		t.Errorf("accepted %d of %d entries", entries.ok, entries.n)
	}
}

// symCode is the code of a function symbol, from its section.
func symCode(t *testing.T, f *elf.File, s elf.Symbol) []byte {
	if int(s.Section) >= len(f.Sections) {
		return nil
	}
	sec := f.Sections[s.Section]
	if sec.Type != elf.SHT_PROGBITS || sec.Flags&elf.SHF_EXECINSTR == 0 ||
		s.Value < sec.Addr || s.Value+s.Size > sec.Addr+sec.Size {
		return nil
	}
	data, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	return data[s.Value-sec.Addr:][:s.Size]
}

// tally counts PlanPad's answers.
type tally struct {
	n, ok, rip int
	why        map[string]int
}

var hexNum = regexp.MustCompile(`0x[0-9a-f]+`)

func (c *tally) add(t *testing.T, fn []byte, fnAddr, site, at uint64, busy func(uint64) bool) {
	t.Helper()
	c.n++
	d, err := PlanPad(fn, fnAddr, site, busy)
	if err != nil {
		if !errors.Is(err, ErrNoPad) {
			t.Fatalf("%#x: %v does not wrap ErrNoPad", site, err)
		}
		why := err.Error()
		why = why[strings.Index(why, ": ")+2:] // after "no jump pad at 0x...: "
		if i := strings.LastIndex(why, ": "); strings.HasPrefix(why, "instruction refused") && i >= 0 {
			why = "instruction refused: " + why[i+2:]
			if errors.Is(err, x86.ErrDecode) {
				why = "instruction refused: cannot decode"
			}
		}
		if testing.Verbose() && site == fnAddr && strings.Contains(why, "lands inside") {
			t.Logf("entry %v", err)
		}
		why, _, _ = strings.Cut(why, " (")
		if c.why == nil {
			c.why = map[string]int{}
		}
		c.why[hexNum.ReplaceAllString(strings.TrimSuffix(why, ")"), "X")]++
		return
	}
	code, err := d.Code(at)
	if err != nil {
		t.Fatalf("%#x: Code(%#x): %v", site, at, err)
	}
	checkCode(t, d, at, code)
	for _, in := range d.Insns {
		if in.an.dispOff >= 0 {
			c.rip++
			break
		}
	}
	c.ok++
}

func (c *tally) String() string {
	reasons := make([]string, 0, len(c.why))
	for w, n := range c.why {
		reasons = append(reasons, fmt.Sprintf("%6d %s", n, w))
	}
	sort.Sort(sort.Reverse(sort.StringSlice(reasons)))
	return fmt.Sprintf("%d of %d accepted (%.1f%%), %d with a RIP-relative operand; refusals:\n%s",
		c.ok, c.n, 100*float64(c.ok)/float64(max(c.n, 1)), c.rip, strings.Join(reasons, "\n"))
}
