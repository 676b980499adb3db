//go:build linux && amd64

package ssol

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-delve/delve/pkg/dwarf/frame"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/internal/x86"
	"golang.org/x/arch/x86/x86asm"
)

const libcPath = "/usr/lib/x86_64-linux-gnu/libc.so.6"

// TestLibc decodes every instruction of real libc functions (the exported
// ones and the AVX2/EVEX implementations their IFUNC resolvers pick from)
// and checks that each gets a decision, that our lengths agree with
// objdump's, and that our RIP-relative locator agrees with objdump's
// operands, VEX and EVEX included.
func TestLibc(t *testing.T) {
	if _, err := os.Stat(libcPath); err != nil {
		t.Skipf("no %s", libcPath)
	}
	need.Tool(t, "objdump")
	f, err := elf.Open(libcPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fdes := libcFDEs(t, f)
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	bySym := map[string]elf.Symbol{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC || elf.ST_TYPE(s.Info) == elf.STT_GNU_IFUNC {
			bySym[s.Name] = s
		}
	}
	text := f.Section(".text")
	code, err := text.Data()
	if err != nil {
		t.Fatal(err)
	}
	ends := map[uint64]uint64{} // function start → end, from the FDEs
	for _, fde := range fdes {
		ends[fde.Begin()] = fde.End()
	}
	fn := func(addr uint64) []byte {
		end, ok := ends[addr]
		if !ok || addr < text.Addr || end > text.Addr+text.Size {
			return nil
		}
		return code[addr-text.Addr : end-text.Addr]
	}

	funcs := map[uint64]string{}
	for _, name := range []string{"printf", "vfprintf", "malloc", "free", "qsort", "syscall", "getpid"} {
		funcs[bySym[name].Value] = name
	}
	// IFUNC resolvers lea the address of each implementation.
	for _, name := range []string{"strlen", "memmove", "memset", "strchr", "memcmp", "strcasecmp", "strncasecmp", "strcasecmp_l", "strncasecmp_l"} {
		res := fn(bySym[name].Value)
		if res == nil {
			t.Fatalf("no FDE for the %s resolver", name)
		}
		pc := bySym[name].Value
		for off := 0; off < len(res); {
			inst, err := x86.Decode(res[off:])
			if err != nil {
				break
			}
			if m, ok := inst.Args[1].(x86asm.Mem); ok && inst.Op == x86asm.LEA && m.Base == x86asm.RIP {
				target := pc + uint64(off+inst.Len) + uint64(m.Disp)
				if fn(target) != nil {
					funcs[target] = fmt.Sprintf("%s impl %#x", name, target)
				}
			}
			off += inst.Len
		}
	}
	if len(funcs) < 20 {
		t.Fatalf("found only %d functions", len(funcs))
	}

	counts := map[string]int{}
	for addr, name := range funcs {
		body := fn(addr)
		if body == nil {
			t.Errorf("%s: no FDE at %#x", name, addr)
			continue
		}
		for _, o := range objdump(t, addr, addr+uint64(len(body))) {
			b := body[o.addr-addr:][:o.len]
			if !bytes.Equal(b, o.bytes) {
				t.Fatalf("%s: objdump bytes at %#x differ", name, o.addr)
			}
			// Probes go at the runtime address; this is the link-time one,
			// as good as any for analysis.
			in, err := Analyze(body[o.addr-addr:], o.addr)
			n, lerr := x86.Len(body[o.addr-addr:])
			switch {
			case lerr == nil && n != o.len:
				t.Errorf("%s: %#x % x: length %d, objdump %d (%s)", name, o.addr, b, n, o.len, o.text)
			case err != nil:
				if !errors.Is(err, ErrRefused) && !errors.Is(err, ErrBreakpoint) {
					t.Errorf("%s: %#x: %v is not a refusal", name, o.addr, err)
				}
				counts["refused"]++
				t.Logf("%s: %v (objdump: %s)", name, err, o.text)
			default:
				counts[[]string{"", "emulate", "boost", "step"}[in.Action]]++
				objRip := strings.Contains(o.text, "[rip")
				if in.Action == Boost && objRip != (in.an.dispOff >= 0) {
					t.Errorf("%s: %#x %s: RIP-relative %v, objdump %q", name, o.addr, in.Text, in.an.dispOff >= 0, o.text)
				}
				if in.an.dispOff >= 0 {
					counts["rip-relative"]++
					if strings.HasPrefix(o.text, "v") {
						counts["rip-relative VEX/EVEX"]++
					}
					checkTarget(t, in, o)
				}
				if in.Action == Boost {
					for _, slot := range []uint64{o.addr + 1<<30, farSlot} {
						s, err := in.Slot(slot)
						if err != nil || len(s) > SlotSize {
							t.Errorf("%s: %#x %s: slot %d bytes, %v", name, o.addr, in.Text, len(s), err)
						}
						in.Action = Boost
					}
				}
			}
		}
	}
	t.Logf("%d functions: %v", len(funcs), counts)
	if counts["rip-relative VEX/EVEX"] == 0 {
		t.Error("no VEX/EVEX RIP-relative instruction met: the test lost its point")
	}
}

// checkTarget compares the RIP-relative target with objdump's "# addr"
// comment.
func checkTarget(t *testing.T, in *Insn, o objInsn) {
	i := strings.LastIndex(o.text, "# ")
	if i < 0 {
		return
	}
	fields := strings.Fields(o.text[i+2:])
	want, err := strconv.ParseUint(fields[0], 16, 64)
	if err != nil {
		return
	}
	got := in.Addr + uint64(len(in.Bytes)) + uint64(int64(in.an.disp))
	if got != want {
		t.Errorf("%#x %s: RIP-relative target %#x, objdump %#x", in.Addr, in.Text, got, want)
	}
}

type objInsn struct {
	addr  uint64
	len   int
	bytes []byte
	text  string
}

var objLine = regexp.MustCompile(`^\s*([0-9a-f]+):\t((?:[0-9a-f]{2} )+)\s*\t?(.*)$`)

func objdump(t *testing.T, start, stop uint64) []objInsn {
	t.Helper()
	out, err := exec.Command("objdump", "-d", "-M", "intel", "--insn-width=16",
		fmt.Sprintf("--start-address=%#x", start), fmt.Sprintf("--stop-address=%#x", stop), libcPath).Output()
	if err != nil {
		t.Fatalf("objdump: %v", err)
	}
	var insns []objInsn
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := objLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		addr, _ := strconv.ParseUint(m[1], 16, 64)
		b := hexBytes(t, m[2])
		insns = append(insns, objInsn{addr, len(b), b, m[3]})
	}
	if len(insns) == 0 {
		t.Fatalf("objdump printed no instruction for %#x-%#x", start, stop)
	}
	return insns
}

func libcFDEs(t *testing.T, f *elf.File) frame.FrameDescriptionEntries {
	t.Helper()
	sec := f.Section(".eh_frame")
	if sec == nil {
		t.Fatal("no .eh_frame")
	}
	data, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	fdes, err := frame.Parse(data, binary.LittleEndian, 0, 8, sec.Addr)
	if err != nil {
		t.Fatal(err)
	}
	return fdes
}
