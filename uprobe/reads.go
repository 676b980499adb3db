//go:build linux && amd64

package uprobe

import (
	"errors"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"
)

// How a probe program reads tracee memory. bpf_probe_read_user runs with
// page faults disabled: a page the tracee has not touched yet (a .rodata
// string, fresh heap) reads as a fault although the tracee could read it.
// A sleepable program (BPF_F_SLEEPABLE, uprobes only) may fault pages in
// with bpf_copy_from_user, and strings with the bpf_copy_from_user_str
// kfunc (6.12+). Both engines then agree: a read fails only when the
// tracee's own read would.
type reads struct {
	sleepable bool  // load with BPF_F_SLEEPABLE and use bpf_copy_from_user
	strKfunc  int64 // BTF id of bpf_copy_from_user_str; 0: none
}

// kernelReads is what the running kernel supports, detected once; a test
// replaces it to check the fallbacks.
var kernelReads = sync.OnceValue(detectReads)

// detectReads loads tiny sleepable programs: the verifier is the only
// reliable feature test (sleepable uprobes: 6.0; uprobe_multi: 6.8).
func detectReads() reads {
	var r reads
	if tryLoad(r.withSleep(), []asm.Instruction{
		asm.Mov.Reg(asm.R1, asm.RFP), asm.Add.Imm(asm.R1, -8),
		asm.Mov.Imm(asm.R2, 8), asm.Mov.Imm(asm.R3, 0),
		asm.FnCopyFromUser.Call(),
	}) != nil {
		return r
	}
	r.sleepable = true
	id, err := kfuncID("bpf_copy_from_user_str")
	if err != nil {
		return r
	}
	if tryLoad(r.withSleep(), []asm.Instruction{
		asm.StoreImm(asm.RFP, -8, 0, asm.DWord),
		asm.Mov.Reg(asm.R1, asm.RFP), asm.Add.Imm(asm.R1, -8),
		asm.Mov.Imm(asm.R2, 8), asm.Mov.Imm(asm.R3, 0), asm.Mov.Imm(asm.R4, 0),
		kfuncCall(id),
	}) == nil {
		r.strKfunc = id
	}
	return r
}

func (r reads) withSleep() reads { r.sleepable = true; return r }

// progFlags are the load flags of a probe program reading this way.
func (r reads) progFlags() uint32 {
	if r.sleepable {
		return unix.BPF_F_SLEEPABLE
	}
	return 0
}

func tryLoad(r reads, body []asm.Instruction) error {
	insns := append(asm.Instructions{}, body...)
	insns = append(insns, asm.Mov.Imm(asm.R0, 0), asm.Return())
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type: ebpf.Kprobe, License: "GPL", Flags: r.progFlags(), Instructions: insns,
	})
	if err == nil {
		p.Close()
	}
	return err
}

// kfuncID finds a kernel function's BTF id in vmlinux.
func kfuncID(name string) (int64, error) {
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		return 0, err
	}
	t, err := spec.AnyTypeByName(name)
	if err != nil {
		return 0, err
	}
	if _, ok := t.(*btf.Func); !ok {
		return 0, errors.New(name + " is not a function")
	}
	id, err := spec.TypeID(t)
	return int64(id), err
}

// kfuncCall calls the vmlinux kfunc of BTF id id (cilium/ebpf resolves
// kfuncs only for programs read from ELF).
func kfuncCall(id int64) asm.Instruction {
	return asm.Instruction{
		OpCode:   asm.OpCode(asm.JumpClass).SetJumpOp(asm.Call),
		Src:      asm.PseudoKfuncCall,
		Constant: id,
	}
}

// memReader emits the reads of tracee memory, each the way the kernel
// best allows (rd).
type memReader struct {
	*code
	rd reads
}

// value replaces the address in R0 by the size bytes of user memory there
// (8 for 0), zero-extended. A failed read is 0 and sets the fault slot.
func (g *memReader) value(size uint8) {
	if size == 0 {
		size = 8
	}
	ok := g.label()
	g.emit(asm.Mov.Reg(asm.R3, asm.R0))
	g.readInto(asm.RFP, slotTmp, int32(size))
	g.emit(asm.JEq.Imm(asm.R0, 0, ok))
	g.setFault()
	g.mark(ok)
	g.emit(asm.LoadMem(asm.R0, asm.RFP, slotTmp, sizeOf(size)))
}

// readInto copies size bytes of tracee memory at the address in R3 to
// dst+off; R0 is then 0, or negative when the memory is unreadable (dst
// zeroed).
func (g *memReader) readInto(dst asm.Register, off int32, size int32) {
	g.emit(
		asm.Mov.Reg(asm.R1, dst),
		asm.Add.Imm(asm.R1, off),
		asm.Mov.Imm(asm.R2, size),
	)
	if g.rd.sleepable {
		g.emit(asm.FnCopyFromUser.Call())
		return
	}
	g.emit(asm.FnProbeReadUser.Call())
}

// readStrInto copies the NUL-terminated string at the address in R0 to
// dst+off, at most size-1 bytes and a NUL. R0 is then the length read
// with its NUL, or negative when a byte before the NUL is unreadable.
func (g *memReader) readStrInto(dst asm.Register, off int32, size int32) {
	args := func() {
		g.emit(
			asm.Mov.Reg(asm.R1, dst),
			asm.Add.Imm(asm.R1, off),
			asm.Mov.Imm(asm.R2, size),
		)
	}
	if g.rd.strKfunc != 0 {
		g.emit(asm.Mov.Reg(asm.R3, asm.R0))
		args()
		g.emit(asm.Mov.Imm(asm.R4, 0), kfuncCall(g.rd.strKfunc))
		return
	}
	if !g.rd.sleepable {
		g.emit(asm.Mov.Reg(asm.R3, asm.R0))
		args()
		g.emit(asm.FnProbeReadUserStr.Call())
		return
	}
	// Sleepable without the kfunc: on a fault, touch the string's page and
	// the next one (a string of at most MaxStrLen bytes spans two) with
	// bpf_copy_from_user, then read again.
	done := g.label()
	g.emit(asm.StoreMem(asm.RFP, slotAddr, asm.R0, asm.DWord), asm.Mov.Reg(asm.R3, asm.R0))
	args()
	g.emit(asm.FnProbeReadUserStr.Call(), asm.JSGE.Imm(asm.R0, 0, done))
	for _, page := range []bool{false, true} {
		g.emit(asm.LoadMem(asm.R3, asm.RFP, slotAddr, asm.DWord))
		if page {
			g.emit(asm.Or.Imm(asm.R3, pageSize-1), asm.Add.Imm(asm.R3, 1))
		}
		g.readInto(asm.RFP, slotTmp, 1)
	}
	g.emit(asm.LoadMem(asm.R3, asm.RFP, slotAddr, asm.DWord))
	args()
	g.emit(asm.FnProbeReadUserStr.Call())
	g.mark(done) // on the caller's next instruction
}

const pageSize = 4096
