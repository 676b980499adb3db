//go:build linux && amd64

package uprobe

import (
	"math"
	"testing"

	"github.com/cilium/ebpf/asm"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/internal/summary"
)

// TestTallyArithmetic runs the bound and bucket code of counting in place
// in the kernel (BPF_PROG_TEST_RUN) over values fed one per run, and
// checks the bounds kept and each bucket against summary.Bucket.
func TestTallyArithmetic(t *testing.T) {
	need.Uprobes(t)
	// One array element: 0 input, 8 max, 16 ^min, 24 bucket of the input.
	run := arithRig(t, 4, func(g *progGen) {
		g.keepLarger(asm.R7, 8, asm.R8)
		g.emit(asm.Mov.Reg(asm.R9, asm.R8), asm.Xor.Imm(asm.R9, -1))
		g.keepLarger(asm.R7, 16, asm.R9)
		g.bucket(asm.R8)
		g.emit(asm.StoreMem(asm.R7, 24, asm.R1, asm.DWord))
	})

	vals := []uint64{1000, 1, 63, 64, 65, 127, 128, 129, 5000, 1 << 20, 3600e9, 1<<40 + 12345, math.MaxUint64 >> 1, 77}
	for v := uint64(1); v < 3000; v += 7 {
		vals = append(vals, v)
	}
	lo, hi := uint64(math.MaxUint64), uint64(0)
	for _, v := range vals {
		cur := run(v)
		lo, hi = min(lo, v), max(hi, v)
		if cur[1] != hi || ^cur[2] != lo {
			t.Fatalf("after %d: max %d min %d, want %d %d", v, cur[1], ^cur[2], hi, lo)
		}
		if want := uint64(summary.Bucket(v)); cur[3] != want {
			t.Errorf("bucket(%d) = %d, want %d", v, cur[3], want)
		}
	}
}
