//go:build linux && amd64

package uprobe

import (
	"github.com/cilium/ebpf/asm"
)

// -k: the user stack at the probe, in an area after the fetch slots of
// the record (records without -k keep their layout: stackOff 0). Two
// modes (Target.StackFP):
//
// dwarf (the default): what a user-space unwinder needs, as perf's
// --call-graph dwarf takes it; unwind.go walks it with the ptrace
// engine's DWARF CFI unwinder (internal/ustack):
//
//	s64 bytes of stack copied (0: none)
//	168 struct pt_regs, the user registers at the probe
//	8 × {u64 stack slot, u64 original return address}: the uretprobes
//	    hijacking the thread's calls (its return_instances, innermost first)
//	the stack from sp up: the rest of sp's page, then stackPages pages
//
// fp: bpf_get_stack(ctx, buf, size, BPF_F_USER_STACK), the kernel's
// frame-pointer walk, which stops early or strays in code built without
// them (most distributions' libc, -O2 code):
//
//	s64 bpf_get_stack's result (bytes written, or -errno)
//	u64 × depth return addresses, innermost first, the probed pc first

const bpfFUserStack = 1 << 8 // BPF_F_USER_STACK

// stackConf is what -k asks of the records.
type stackConf struct {
	depth int  // frames at most; 0: no stacks
	fp    bool // the kernel's frame-pointer walk instead of a copy
}

// The dwarf area's layout.
const (
	stkOffRegs  = 8
	ptRegsSize  = 168 // sizeof(struct pt_regs) on x86_64
	stkOffRets  = stkOffRegs + ptRegsSize
	stkMaxRets  = 8
	stkOffData  = stkOffRets + 16*stkMaxRets
	stkPages    = 3                        // whole pages copied after sp's own
	stkDataSize = 4096 * (stkPages + 1)    // room for them and sp's page's rest
	stkSlotN    = slotStack                // bytes copied so far
	stkSlotRi   = slotStack - 8            // the return instance being read
	stkAreaFP   = 8                        // plus 8 × depth
	stkAreaDW   = stkOffData + stkDataSize // the dwarf area's bytes
)

// areaSize is the bytes of a stack area of sc.
func (sc stackConf) areaSize() int {
	if sc.fp {
		return stkAreaFP + 8*sc.depth
	}
	return stkAreaDW
}

// reserveStack places the stack area at the end of p's record.
func reserveStack(p *program, sc stackConf) {
	if sc.depth <= 0 {
		return
	}
	p.stackOff = p.size
	p.stackConf = sc
	p.size += sc.areaSize()
}

// storeStack fills the stack area of the record R7 points to; R6 is the
// program's context, struct pt_regs.
func (g *progGen) storeStack(p *program) {
	if p.stackOff == 0 {
		return
	}
	if p.stackConf.fp {
		g.getStack(asm.R6, p.stackOff, p.stackConf.depth)
		return
	}
	for i := 0; i < ptRegsSize; i += 8 {
		g.emit(
			asm.LoadMem(asm.R1, asm.R6, int16(i), asm.DWord),
			asm.StoreMem(asm.R7, int16(p.stackOff+stkOffRegs+i), asm.R1, asm.DWord),
		)
	}
	g.copyStack(p.stackOff)
}

// getStack calls bpf_get_stack(ctx, R7+off+8, 8×depth, BPF_F_USER_STACK)
// and stores its result at R7+off.
func (g *progGen) getStack(ctx asm.Register, off, depth int) {
	g.emit(
		asm.Mov.Reg(asm.R1, ctx),
		asm.Mov.Reg(asm.R2, asm.R7),
		asm.Add.Imm(asm.R2, int32(off+8)),
		asm.Mov.Imm(asm.R3, int32(8*depth)),
		asm.Mov.Imm(asm.R4, bpfFUserStack),
		asm.FnGetStack.Call(),
		asm.StoreMem(asm.R7, int16(off), asm.R0, asm.DWord),
	)
}

// copyStack fills the dwarf area at R7+off, its registers already there:
// the uretprobes' return instances, then the stack from sp, a page at a
// time (pages are readable whole or not at all: the last one copied may
// be the stack's top). bpf_probe_read_user cannot fault pages in, but
// the pages near sp are the thread's own, in use.
func (g *progGen) copyStack(off int) {
	g.returnInstances(off)
	fail, end := g.label(), g.label()
	g.emit(
		asm.LoadMem(asm.R3, asm.R7, int16(off+stkOffRegs+regSP), asm.DWord),
		asm.Mov.Reg(asm.R2, asm.R3),
		asm.And.Imm(asm.R2, 4095),
		asm.Mov.Imm(asm.R1, 4096),
		asm.Sub.Reg(asm.R1, asm.R2),
		asm.Mov.Reg(asm.R2, asm.R1), // [1, 4096]: to the end of sp's page
		asm.StoreMem(asm.RFP, stkSlotN, asm.R2, asm.DWord),
		asm.Mov.Reg(asm.R1, asm.R7),
		asm.Add.Imm(asm.R1, int32(off+stkOffData)),
		asm.FnProbeReadUser.Call(),
		asm.JNE.Imm(asm.R0, 0, fail),
	)
	for range stkPages {
		g.emit(
			asm.LoadMem(asm.R2, asm.RFP, stkSlotN, asm.DWord),
			asm.LoadMem(asm.R3, asm.R7, int16(off+stkOffRegs+regSP), asm.DWord),
			asm.Add.Reg(asm.R3, asm.R2),
			asm.Mov.Reg(asm.R1, asm.R7),
			asm.Add.Imm(asm.R1, int32(off+stkOffData)),
			asm.Add.Reg(asm.R1, asm.R2),
			asm.Mov.Imm(asm.R2, 4096),
			asm.FnProbeReadUser.Call(),
			asm.JNE.Imm(asm.R0, 0, end),
			asm.LoadMem(asm.R2, asm.RFP, stkSlotN, asm.DWord),
			asm.Add.Imm(asm.R2, 4096),
			asm.StoreMem(asm.RFP, stkSlotN, asm.R2, asm.DWord),
		)
	}
	g.mark(end)
	g.emit(
		asm.LoadMem(asm.R1, asm.RFP, stkSlotN, asm.DWord),
		asm.StoreMem(asm.R7, int16(off), asm.R1, asm.DWord),
		asm.Ja.Label(end+"_out"),
	)
	g.mark(fail)
	g.emit(storeImm64(asm.R7, int16(off), 0))
	g.mark(end + "_out")
	g.emit(asm.Mov.Imm(asm.R0, 0)) // the label's instruction
}

// returnInstances copies, for each uretprobe hijacking one of the
// thread's calls, the stack slot of its return address and the original
// return address (struct return_instance's stack and orig_ret_vaddr,
// adjacent), innermost first, from current->utask->return_instances:
// the copied stack holds the kernel's trampoline in those slots.
// Without the kernel's BTF the area stays zero: frames stop there.
func (g *progGen) returnInstances(off int) {
	for i := range stkMaxRets {
		g.emit(storeImm64(asm.R7, int16(off+stkOffRets+16*i), 0))
	}
	ro, err := retInstOffsets()
	if err != nil {
		return
	}
	done := g.label()
	g.emit(
		asm.FnGetCurrentTask.Call(),
		asm.Mov.Reg(asm.R3, asm.R0),
		asm.Add.Imm(asm.R3, ro.utask),
	)
	readKernelWord(g, done)
	g.emit(
		asm.JEq.Imm(asm.R1, 0, done),
		asm.Mov.Reg(asm.R3, asm.R1),
		asm.Add.Imm(asm.R3, ro.list),
	)
	readKernelWord(g, done)
	for i := range stkMaxRets {
		g.emit(
			asm.JEq.Imm(asm.R1, 0, done),
			asm.StoreMem(asm.RFP, stkSlotRi, asm.R1, asm.DWord),
			asm.Mov.Reg(asm.R3, asm.R1),
			asm.Add.Imm(asm.R3, ro.stack),
			asm.Mov.Reg(asm.R1, asm.R7),
			asm.Add.Imm(asm.R1, int32(off+stkOffRets+16*i)),
			asm.Mov.Imm(asm.R2, 16),
			asm.FnProbeReadKernel.Call(),
			asm.JNE.Imm(asm.R0, 0, done),
			asm.LoadMem(asm.R3, asm.RFP, stkSlotRi, asm.DWord),
			asm.Add.Imm(asm.R3, ro.next),
		)
		readKernelWord(g, done)
	}
	g.mark(done)
	g.emit(asm.Mov.Imm(asm.R0, 0)) // the label's instruction
}
