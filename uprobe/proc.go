//go:build linux && amd64

package uprobe

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/utap/utap/probe"
	"golang.org/x/sys/unix"
)

// Process events (Target.ProcessEvents): the signals delivered to traced
// threads and their exits, which strace shows between calls. Two raw
// tracepoint programs, filtered on the tgid map, send them to the events
// ring, the one the system call records go to: a signal comes after the
// call it interrupted and before the handler's calls, as strace shows it.
//
// Raw tracepoints rather than classic ones: signal:signal_deliver's
// classic record has the signal number and code but not the sender, and
// sched:sched_process_exit's none of the exit status. The raw ones pass
// the kernel's pointers, read with bpf_probe_read_kernel: the siginfo at
// its ABI layout, the task's exit_code at the offset the kernel's BTF
// gives (it moves between builds).
//
// Record, 80 bytes (a signal) or 32 (an exit):
//
//	0  u64 procTag | kind       8  u64 tgid<<32 | tid     16 u64 time
//	24 u64 signal number, or the task's exit_code (its wait status)
//	32 the first 48 bytes of struct kernel_siginfo (a signal)
const (
	procTag      = sysTag | 1<<62
	procSignal   = 1
	procExit     = 2
	procOffWhat  = 24
	procOffInfo  = 32
	procInfoSize = 48 // sizeof(struct kernel_siginfo) on x86-64
	procSigSize  = procOffInfo + procInfoSize
	procExitSize = 32
	siginfoSize  = 128 // the user siginfo_t Event.Signal holds
	siKernel     = 0x80
	siUser       = 0
)

// isProcRecord says whether a ring record is a process event's.
func isProcRecord(raw []byte) bool {
	return len(raw) >= 8 && binary.LittleEndian.Uint64(raw)&procTag == procTag
}

// procInsns is a process event program: the record is built on the stack
// at fp-96 and sent with bpf_ringbuf_output.
func procInsns(kind int32, exitCode int32) asm.Instructions {
	const rec = -96
	insns := asm.Instructions{asm.Mov.Reg(asm.R6, asm.R1)}
	insns = append(insns, ifTracedTgid()...)
	size := int32(procExitSize)
	if kind == procSignal {
		size = procSigSize
		insns = append(insns,
			// SEND_SIG_NOINFO: the kill of a group exit, which strace never
			// shows (no signal-delivery-stop for it either).
			asm.LoadMem(asm.R7, asm.R6, 8, asm.DWord),
			asm.JEq.Imm(asm.R7, 0, "exit"),
		)
	}
	insns = append(insns,
		asm.LoadImm(asm.R1, int64(procTag|uint64(kind)), asm.DWord),
		asm.StoreMem(asm.RFP, rec, asm.R1, asm.DWord),
		asm.FnGetCurrentPidTgid.Call(),
		asm.StoreMem(asm.RFP, rec+8, asm.R0, asm.DWord),
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.RFP, rec+16, asm.R0, asm.DWord),
	)
	if kind == procSignal {
		insns = append(insns,
			asm.LoadMem(asm.R1, asm.R6, 0, asm.DWord), // arg0: int sig
			asm.StoreMem(asm.RFP, rec+procOffWhat, asm.R1, asm.DWord),
		)
		insns = append(insns, readSiginfo(rec)...)
	} else {
		insns = append(insns,
			storeImm64(asm.RFP, rec+procOffWhat, 0),
			asm.Mov.Reg(asm.R1, asm.RFP),
			asm.Add.Imm(asm.R1, rec+procOffWhat),
			asm.Mov.Imm(asm.R2, 4),
			asm.LoadMem(asm.R3, asm.R6, 0, asm.DWord), // arg0: the exiting task
			asm.Add.Imm(asm.R3, exitCode),
			asm.FnProbeReadKernel.Call(),
		)
	}
	return append(insns, procSend(rec, size)...)
}

// procSend sends the record at fp+rec of size bytes to the events ring,
// counting it lost when the ring is full, and returns.
func procSend(rec int16, size int32) asm.Instructions {
	lost := "lost"
	return append(asm.Instructions{
		mapPtr(asm.R1, mapEvents),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(rec)),
		asm.Mov.Imm(asm.R3, size),
		asm.Mov.Imm(asm.R4, 0), // rare: wake the reader as the ring decides
		asm.FnRingbufOutput.Call(),
		asm.JEq.Imm(asm.R0, 0, "exit"),
	}, countAndExit(lost, -8, statLost)...)
}

// readSiginfo copies the struct kernel_siginfo at R7 into the record at
// fp+rec, zeroed first (a fault leaves zeros).
func readSiginfo(rec int16) asm.Instructions {
	var insns asm.Instructions
	for off := int16(0); off < procInfoSize; off += 8 {
		insns = append(insns, storeImm64(asm.RFP, rec+procOffInfo+off, 0))
	}
	return append(insns,
		asm.Mov.Reg(asm.R1, asm.RFP),
		asm.Add.Imm(asm.R1, int32(rec+procOffInfo)),
		asm.Mov.Imm(asm.R2, procInfoSize),
		asm.Mov.Reg(asm.R3, asm.R7),
		asm.FnProbeReadKernel.Call(),
	)
}

// countAndExit, at label, adds one to stats counter stat (its key kept at
// frame slot key) and returns 0: the end of the hand-written programs
// (code.addOne is the generated programs').
func countAndExit(label string, key int16, stat int32) asm.Instructions {
	return asm.Instructions{
		asm.StoreImm(asm.RFP, key, int64(stat), asm.Word).WithSymbol(label),
		mapPtr(asm.R1, mapStats),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, int32(key)),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "exit"),
		asm.Mov.Imm(asm.R1, 1),
		asm.StoreXAdd(asm.R0, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("exit"),
		asm.Return(),
	}
}

// attachProc loads the programs into o and attaches them with a; they run
// for tgids in the map only, so this may go before the command starts.
func attachProc(o *kernelObjs, a *attacher) error {
	off, err := taskOffset("exit_code")
	if err != nil {
		return err
	}
	pid, err := taskOffset("pid")
	if err != nil {
		return err
	}
	tgid, err := taskOffset("tgid")
	if err != nil {
		return err
	}
	for _, p := range []struct {
		name, tp string
		insns    asm.Instructions
	}{
		{"utap_signal", "signal_deliver", procInsns(procSignal, off)},
		{"utap_sigign", "signal_generate", ignoredInsns(pid, tgid)},
		{"utap_exit", "sched_process_exit", procInsns(procExit, off)},
	} {
		ps := &ebpf.ProgramSpec{Name: p.name, Type: ebpf.RawTracepoint, License: "GPL", Instructions: p.insns}
		for name, m := range map[string]*ebpf.Map{mapEvents: o.events, mapStats: o.stats, mapTgids: o.tgids} {
			ps.Instructions.AssociateMap(name, m)
		}
		prog, err := ebpf.NewProgram(ps)
		if err != nil {
			return fmt.Errorf("loading the %s program: %w", p.tp, verifierReason(err))
		}
		o.keep(prog)
		l, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: p.tp, Program: prog})
		if err != nil {
			return fmt.Errorf("attaching to the raw tracepoint %s: %w", p.tp, hint(err))
		}
		a.keep(l)
	}
	return nil
}

// ownThread says whether tid is one of utap's threads (a detach with a
// signal names the tracer's thread as its sender).
func ownThread(tid int) bool {
	_, err := os.Stat("/proc/self/task/" + strconv.Itoa(tid))
	return tid == os.Getpid() || err == nil
}

// decodeProc turns a process event's record into ev; false for one not
// to show: with execStops, the exec follower's own stop and continue
// (exec.go).
func decodeProc(raw []byte, ev *probe.Event, execStops bool) (bool, error) {
	le := binary.LittleEndian
	kind := le.Uint64(raw) &^ procTag
	if len(raw) < procExitSize || kind == procSignal && len(raw) < procSigSize {
		return false, fmt.Errorf("short process event record (%d bytes)", len(raw))
	}
	pidTgid := le.Uint64(raw[8:])
	*ev = probe.Event{TimeNs: int64(le.Uint64(raw[16:])), PID: int(pidTgid >> 32), TID: int(uint32(pidTgid))}
	what := le.Uint64(raw[procOffWhat:])
	switch kind {
	case procExit:
		ev.Kind, ev.Status = "exit", int(int32(what))
	case procSignal:
		info := make([]byte, siginfoSize)
		copy(info, raw[procOffInfo:procSigSize])
		sig := unix.Signal(what)
		code, pid := int32(le.Uint32(info[8:])), int32(le.Uint32(info[16:]))
		// utap's own stop and continue: the exec follower's (a kernel
		// SIGSTOP), and the seize of a launched command (proc.Child.Seize).
		ours := (sig == unix.SIGSTOP || sig == unix.SIGCONT) && code == siUser && ownThread(int(pid))
		if ours || execStops && sig == unix.SIGSTOP && code == siKernel {
			return false, nil
		}
		ev.Kind, ev.Func, ev.Signal = "signal", unix.SignalName(sig), info
	default:
		return false, fmt.Errorf("process event record of kind %d", kind)
	}
	return true, nil
}
