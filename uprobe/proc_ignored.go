//go:build linux && amd64

package uprobe

import (
	"github.com/cilium/ebpf/asm"
)

// A signal whose action is to be ignored (SIGCHLD, SIGURG, SIGWINCH by
// default) is dropped when it is sent, never delivered: signal_deliver
// does not see it. strace shows it, since a ptraced task gets every signal
// (the kernel ignores none for it). The raw tracepoint signal_generate
// (sig, info, task, group, result) reports it as result
// TRACE_SIGNAL_IGNORED, in the sender's context: the traced task is
// task, read through its BTF offsets, not the current one.

const traceSignalIgnored = 1 // enum trace_signal_result

// ignoredInsns is the signal_generate program: for a signal ignored on
// arrival at a traced task, the record of a delivered one (procInsns'
// layout), on behalf of that task.
func ignoredInsns(pid, tgid int32) asm.Instructions {
	const rec = -96
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.LoadMem(asm.R1, asm.R6, 32, asm.DWord), // arg4: result
		asm.JNE.Imm(asm.R1, traceSignalIgnored, "exit"),
		asm.LoadMem(asm.R7, asm.R6, 8, asm.DWord), // arg1: info
		asm.JLE.Imm(asm.R7, 1, "exit"),            // SEND_SIG_NOINFO, SEND_SIG_PRIV: no siginfo to show
		// The task's tid and tgid, as bpf_get_current_pid_tgid packs them.
		storeImm64(asm.RFP, rec+8, 0),
		asm.Mov.Reg(asm.R1, asm.RFP),
		asm.Add.Imm(asm.R1, rec+8),
		asm.Mov.Imm(asm.R2, 4),
		asm.LoadMem(asm.R3, asm.R6, 16, asm.DWord), // arg2: task
		asm.Add.Imm(asm.R3, pid),
		asm.FnProbeReadKernel.Call(),
		asm.Mov.Reg(asm.R1, asm.RFP),
		asm.Add.Imm(asm.R1, rec+12),
		asm.Mov.Imm(asm.R2, 4),
		asm.LoadMem(asm.R3, asm.R6, 16, asm.DWord),
		asm.Add.Imm(asm.R3, tgid),
		asm.FnProbeReadKernel.Call(),
		// Traced? The task's, not the sender's.
		asm.LoadMem(asm.R1, asm.RFP, rec+12, asm.Word),
	}
	insns = append(insns, ifTgidTraced()...)
	insns = append(insns,
		asm.LoadImm(asm.R1, int64(signalTag), asm.DWord),
		asm.StoreMem(asm.RFP, rec, asm.R1, asm.DWord),
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.RFP, rec+16, asm.R0, asm.DWord),
		asm.LoadMem(asm.R1, asm.R6, 0, asm.DWord), // arg0: int sig
		asm.StoreMem(asm.RFP, rec+procOffWhat, asm.R1, asm.DWord),
	)
	insns = append(insns, readSiginfo(rec)...)
	return append(insns, procSend(rec, procSigSize)...)
}

// signalTag heads a signal's record (a variable: the constant overflows
// int64, the instruction's immediate).
var signalTag uint64 = procTag | procSignal
