//go:build linux && amd64

package uprobe

import (
	"encoding/binary"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// arithRig loads a program (BPF_PROG_TEST_RUN) that looks up the one
// element of an array of words 8-byte words, R7 pointing to it and R8
// holding its first word, the input, then runs body's code. run puts in
// as the input, runs the program and returns the element: a code
// generator's arithmetic fed one value per run, checked from Go.
func arithRig(t *testing.T, words int, body func(g *progGen)) (run func(in uint64) []uint64) {
	t.Helper()
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: uint32(8 * words), MaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
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
	body(g)
	g.mark("exit")
	g.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.Syscall, License: "GPL", Instructions: g.insns, Flags: kernelReads().withSleep().progFlags()})
	if err != nil {
		t.Fatal(verifierReason(err))
	}
	t.Cleanup(func() { prog.Close() })
	return func(in uint64) []uint64 {
		t.Helper()
		cur := make([]byte, 8*words)
		if err := m.Lookup(uint32(0), cur); err != nil {
			t.Fatal(err)
		}
		binary.LittleEndian.PutUint64(cur, in)
		if err := m.Put(uint32(0), cur); err != nil {
			t.Fatal(err)
		}
		if _, err := prog.Run(&ebpf.RunOptions{Context: make([]byte, 8)}); err != nil {
			t.Fatal(err)
		}
		if err := m.Lookup(uint32(0), cur); err != nil {
			t.Fatal(err)
		}
		out := make([]uint64, words)
		for i := range out {
			out[i] = binary.LittleEndian.Uint64(cur[8*i:])
		}
		return out
	}
}
