//go:build linux && amd64

package uprobe

import "github.com/cilium/ebpf/asm"

// What the system call programs read of the calling task beyond the
// tracepoint's record: whether it is being killed, and its stack pointer.

// dyingCall marks the call of a thread that is being killed (another
// thread's exit_group, a SIGKILL) as never returning: its exit
// tracepoint still fires, with a restart code (-ERESTARTSYS...), but the
// thread never sees it, and strace shows the call as "= ?". R1 holds the
// return value; the thread's SIGKILL is read from task_struct.pending.
func dyingCall(g *progGen) {
	// struct sigpending: a list_head, then the set's first word.
	off, err := taskOffset("pending", "signal")
	if err != nil {
		return // no BTF: the restart code is shown
	}
	keep, dying := g.label(), g.label()
	g.emit(
		asm.JSLT.Imm(asm.R1, -516, keep), // -ERESTART_RESTARTBLOCK
		asm.JSGT.Imm(asm.R1, -512, keep), // -ERESTARTSYS
		asm.FnGetCurrentTask.Call(),
		asm.Mov.Reg(asm.R3, asm.R0),
		asm.Add.Imm(asm.R3, off),
	)
	readKernelWord(g, keep)
	g.emit(
		asm.JSet.Imm(asm.R1, 1<<(9-1), dying), // SIGKILL
		asm.Ja.Label(keep),
	)
	g.mark(dying)
	g.emit(storeImm64(asm.R6, sysOffFlags, 0))
	g.mark(keep)
}

// stackPointer stores, in the record at sysOffSP, the caller's stack
// pointer plus the SP capture's offset (rt_sigreturn's signal frame), for
// the capture reader to take as an address. Only a trace with such a
// capture gets the code; the pt_regs come from bpf_task_pt_regs.
func (ss *sysSpec) stackPointer(g *progGen) {
	off := -1
	for _, c := range ss.calls {
		for _, cp := range c.info.caps {
			if cp.spOff >= 0 {
				off = cp.spOff
			}
		}
	}
	if off < 0 {
		return
	}
	skip := g.label()
	g.emit(
		storeImm64(asm.R6, sysOffSP, 0),
		asm.FnGetCurrentTaskBtf.Call(),
		asm.Mov.Reg(asm.R1, asm.R0),
		asm.FnTaskPtRegs.Call(),
		asm.Mov.Reg(asm.R3, asm.R0),
		asm.Add.Imm(asm.R3, ptRegsSP),
	)
	readKernelWord(g, skip)
	g.emit(
		asm.Add.Imm(asm.R1, int32(off)),
		asm.StoreMem(asm.R6, sysOffSP, asm.R1, asm.DWord),
	)
	g.mark(skip)
	g.emit(asm.Mov.Imm(asm.R0, 0)) // the mark needs an instruction
}

// ptRegsSP is struct pt_regs' sp on x86-64.
const ptRegsSP = 152
