//go:build linux && amd64

package uprobe

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
)

// code is one program's instruction stream with its labels, and the map
// calls every program makes. The generators of a program (progGen,
// exprGen and its parts) share one, so that labels stay unique.
type code struct {
	insns   asm.Instructions
	pending string // label of the next emitted instruction
	labels  int
}

func (c *code) emit(ins ...asm.Instruction) {
	for _, in := range ins {
		if c.pending != "" {
			in = in.WithSymbol(c.pending)
			c.pending = ""
		}
		c.insns = append(c.insns, in)
	}
}

func (c *code) label() string {
	c.labels++
	return fmt.Sprintf("L%d", c.labels)
}

// mark places label l on the next emitted instruction. An instruction
// carries one symbol, so a second label in a row gets a no-op of its own.
func (c *code) mark(l string) {
	if c.pending != "" {
		c.emit(asm.Instruction{OpCode: asm.OpCode(asm.JumpClass).SetJumpOp(asm.Ja)})
	}
	c.pending = l
}

func (c *code) setFault() { c.emit(storeImm64(asm.RFP, slotFault, 1)) }

// count adds one to counter idx of the stats map.
func (c *code) count(m maps, idx int32) {
	skip := c.label()
	c.emit(asm.StoreImm(asm.RFP, slotTmp, int64(idx), asm.Word))
	c.addOne(m.stats, slotTmp, skip)
	c.mark(skip)
}

// addOne adds one, atomically, to the u64 value of the map entry keyed
// at frame slot key; it jumps to missing when there is no such entry.
func (c *code) addOne(name string, key int16, missing string) {
	c.lookup(name, key)
	c.emit(
		asm.JEq.Imm(asm.R0, 0, missing),
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreXAdd(asm.R0, asm.R1, asm.DWord),
	)
}

// lookup calls bpf_map_lookup_elem with the key at frame slot key.
func (c *code) lookup(name string, key int16) {
	c.emit(
		mapPtr(asm.R1, name),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(key)),
		asm.FnMapLookupElem.Call(),
	)
}

// update calls bpf_map_update_elem with the key and value at frame slots.
func (c *code) update(name string, key, value int16, flags int32) {
	c.emit(
		mapPtr(asm.R1, name),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(key)),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, int32(value)),
		asm.Mov.Imm(asm.R4, flags),
		asm.FnMapUpdateElem.Call(),
	)
}

// storeImm64 stores a sign-extended 32-bit immediate as a u64, which
// asm.StoreImm declines to encode for DWord.
func storeImm64(dst asm.Register, off int16, v int32) asm.Instruction {
	return asm.Instruction{OpCode: asm.StoreImmOp(asm.DWord), Dst: dst, Offset: off, Constant: int64(v)}
}
