//go:build linux && amd64

package uprobe

import (
	"encoding/binary"

	"github.com/cilium/ebpf/asm"
	"github.com/utap/utap/probe"
)

// -k on system calls (strace -k): sys_enter sends the calling thread's
// user stack in a record of its own, before the call's record (which
// waits in a per-thread hash, too small for a stack copy). The reader
// keeps it per thread until that call's record comes:
//
//	0  u64 stackTag | system call number
//	8  u64 tgid<<32 | tid
//	16 the stack area (stack.go), the user registers from bpf_task_pt_regs
const (
	stackTag    = sysTag | 1<<61
	sysStkOff   = 16
	sysStkIsTag = procTag | stackTag // the bits that tell the kinds apart
)

var stackTagWord uint64 = stackTag // as the instruction's signed immediate

// isStackRecord says whether a ring record is a system call's stack.
func isStackRecord(raw []byte) bool {
	return len(raw) >= sysStkOff && binary.LittleEndian.Uint64(raw)&sysStkIsTag == stackTag
}

// stackRecord sends the stack record of the call entering; R8, R9 and
// the frame's slots are left as they were.
func (ss *sysSpec) stackRecord(g *progGen, m maps) {
	if ss.stack.depth <= 0 {
		return
	}
	done, drop := g.label(), g.label()
	g.emit(
		mapPtr(asm.R1, m.events),
		asm.Mov.Imm(asm.R2, int32(sysStkOff+ss.stack.areaSize())),
		asm.Mov.Imm(asm.R3, 0),
		asm.FnRingbufReserve.Call(),
		asm.JEq.Imm(asm.R0, 0, done),
		asm.Mov.Reg(asm.R7, asm.R0),
		asm.LoadMem(asm.R1, asm.R9, tpOffID, asm.Word),
		asm.LoadImm(asm.R2, int64(stackTagWord), asm.DWord),
		asm.Or.Reg(asm.R1, asm.R2),
		asm.StoreMem(asm.R7, 0, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.RFP, sysSlotKey, asm.DWord),
		asm.StoreMem(asm.R7, 8, asm.R1, asm.DWord),
	)
	if ss.stack.fp {
		g.getStack(asm.R9, sysStkOff, ss.stack.depth)
	} else {
		g.emit(
			asm.FnGetCurrentTaskBtf.Call(),
			asm.Mov.Reg(asm.R1, asm.R0),
			asm.FnTaskPtRegs.Call(),
			asm.Mov.Reg(asm.R3, asm.R0),
			asm.Mov.Reg(asm.R1, asm.R7),
			asm.Add.Imm(asm.R1, sysStkOff+stkOffRegs),
			asm.Mov.Imm(asm.R2, ptRegsSize),
			asm.FnProbeReadKernel.Call(),
			asm.JNE.Imm(asm.R0, 0, drop),
		)
		g.copyStack(sysStkOff)
	}
	g.emit(
		asm.Mov.Reg(asm.R1, asm.R7),
		asm.Mov.Imm(asm.R2, 1), // BPF_RB_NO_WAKEUP: the call's record wakes
		asm.FnRingbufSubmit.Call(),
	)
	if !ss.stack.fp {
		g.emit(asm.Ja.Label(done))
		g.mark(drop)
		g.emit(
			asm.Mov.Reg(asm.R1, asm.R7),
			asm.Mov.Imm(asm.R2, 0),
			asm.FnRingbufDiscard.Call(),
		)
	}
	g.mark(done)
	g.emit(asm.Mov.Imm(asm.R0, 0)) // the label's instruction
}

// sysEntry keeps the stack of the call a thread entered.
func (d *stackDecoder) sysEntry(raw []byte, sc stackConf) {
	le := binary.LittleEndian
	if len(raw) < sysStkOff+sc.areaSize() {
		return
	}
	pidTgid := le.Uint64(raw[8:])
	if d.sys == nil {
		d.sys = map[int]sysStack{}
	}
	d.sys[int(uint32(pidTgid))] = sysStack{
		nr:     int(le.Uint64(raw) &^ stackTag),
		frames: d.frames(raw[sysStkOff:], int(pidTgid>>32), sc),
	}
}

// sysStack takes the stack of thread tid's call nr, nil if none came.
func (d *stackDecoder) sysStack(tid, nr int) []probe.Frame {
	st, ok := d.sys[tid]
	if !ok || st.nr != nr {
		return nil
	}
	delete(d.sys, tid)
	return st.frames
}
