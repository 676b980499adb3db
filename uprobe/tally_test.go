//go:build linux && amd64

package uprobe

import (
	"math"
	"testing"

	"github.com/cilium/ebpf"
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
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 32, MaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	g := &progGen{code: &code{}}
	g.emit(
		asm.StoreImm(asm.RFP, slotTmp, 0, asm.Word),
		asm.LoadMapPtr(asm.R1, m.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, slotTmp),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "exit"),
		asm.Mov.Reg(asm.R7, asm.R0),
		asm.LoadMem(asm.R8, asm.R7, 0, asm.DWord),
	)
	g.keepLarger(asm.R7, 8, asm.R8)
	g.emit(asm.Mov.Reg(asm.R9, asm.R8), asm.Xor.Imm(asm.R9, -1))
	g.keepLarger(asm.R7, 16, asm.R9)
	g.bucket(asm.R8)
	g.emit(asm.StoreMem(asm.R7, 24, asm.R1, asm.DWord))
	g.mark("exit")
	g.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.Syscall, License: "GPL", Instructions: g.insns, Flags: kernelReads().withSleep().progFlags()})
	if err != nil {
		t.Fatal(verifierReason(err))
	}
	defer prog.Close()

	vals := []uint64{1000, 1, 63, 64, 65, 127, 128, 129, 5000, 1 << 20, 3600e9, 1<<40 + 12345, math.MaxUint64 >> 1, 77}
	for v := uint64(1); v < 3000; v += 7 {
		vals = append(vals, v)
	}
	lo, hi := uint64(math.MaxUint64), uint64(0)
	for _, v := range vals {
		var cur [4]uint64
		if err := m.Lookup(uint32(0), &cur); err != nil {
			t.Fatal(err)
		}
		cur[0] = v
		if err := m.Put(uint32(0), cur); err != nil {
			t.Fatal(err)
		}
		if _, err := prog.Run(&ebpf.RunOptions{Context: make([]byte, 8)}); err != nil {
			t.Fatal(err)
		}
		if err := m.Lookup(uint32(0), &cur); err != nil {
			t.Fatal(err)
		}
		lo, hi = min(lo, v), max(hi, v)
		if cur[1] != hi || ^cur[2] != lo {
			t.Fatalf("after %d: max %d min %d, want %d %d", v, cur[1], ^cur[2], hi, lo)
		}
		if want := uint64(summary.Bucket(v)); cur[3] != want {
			t.Errorf("bucket(%d) = %d, want %d", v, cur[3], want)
		}
	}
}
