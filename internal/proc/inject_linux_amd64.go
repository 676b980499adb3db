package proc

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// syscallCode is what an injected system call runs: syscall; int3.
// udCode ends with ud2 instead (Injection.UD2).
var syscallCode, udCode = []byte{0x0f, 0x05, 0xcc}, []byte{0x0f, 0x05, 0x0f, 0x0b}

// Synchronous are the signals an instruction raises (bit n-1 is signal
// n), and SIGKILL and SIGSTOP, which cannot be blocked. The others can
// wait, blocked, while a thread runs code of ours.
const Synchronous uint64 = 1<<(unix.SIGTRAP-1) | 1<<(unix.SIGILL-1) | 1<<(unix.SIGSEGV-1) | 1<<(unix.SIGBUS-1) |
	1<<(unix.SIGFPE-1) | 1<<(unix.SIGKILL-1) | 1<<(unix.SIGSTOP-1)

// BlockAsync blocks stopped tid's asynchronous signals (all but
// Synchronous) and returns its mask as it was, to put back.
func BlockAsync(tid int) (uint64, error) {
	mask, err := GetSigmask(tid)
	if err == nil {
		err = SetSigmask(tid, mask|^Synchronous)
	}
	return mask, err
}

// ErrGone: the thread exited while running an injected system call.
var ErrGone = errors.New("process exited")

// Injection is where and how a system call is injected into a stopped
// thread, and what the engine does with the stops met meanwhile.
type Injection struct {
	Tid int
	Mem *Memory
	// At is where the code goes: the entry point (code that runs at most
	// once, at start-up). Its bytes are borrowed with every thread of the
	// process stopped, and put back before any runs on.
	At uint64
	// Held receives a signal that arrived meanwhile, to deliver when the
	// thread resumes.
	Held func(sig int)
	// Exited receives the thread's exit status when it died meanwhile.
	Exited func(ws unix.WaitStatus)
	// UD2 ends the call with a ud2 (SIGILL) rather than an int3: the
	// int3's SIGTRAP is forced, and resets an ignored SIGTRAP to SIG_DFL,
	// which would undo a call that sets it ignored.
	UD2 bool
}

// Syscall makes the thread run system call nr with args and returns its
// result (-errno as an error; ErrGone if the thread exited). Its
// registers are saved and restored around it.
func (in Injection) Syscall(nr uint64, args ...uint64) (uint64, error) {
	var saved, regs unix.PtraceRegs
	if err := GetRegs(in.Tid, &saved); err != nil {
		return 0, gone(err)
	}
	code, end, endSig := syscallCode, in.At+uint64(len(syscallCode)), int(unix.SIGTRAP)
	if in.UD2 {
		code, end, endSig = udCode, in.At+2, int(unix.SIGILL)
	}
	orig := make([]byte, len(code))
	if err := in.Mem.ReadByMem(orig, in.At); err != nil {
		return 0, err
	}
	if err := in.Mem.WriteAt(code, in.At); err != nil {
		return 0, err
	}
	defer in.Mem.WriteAt(orig, in.At)

	// Asynchronous signals wait, blocked, until the call is done: under a
	// flood one is always pending, and the thread would stop for it at every
	// resume without ever running the call. The ones the call's own code
	// raises stay as the program has them (a forced signal that is blocked
	// resets its handler).
	mask, err := BlockAsync(in.Tid)
	if err != nil {
		return 0, gone(err)
	}
	defer SetSigmask(in.Tid, mask)

	regs = saved
	regs.Rip = in.At
	regs.Rax = nr
	// orig_rax -1: not inside a system call, so the kernel does not treat
	// the stop as an interrupted call to restart (rewinding rip by 2).
	regs.Orig_rax = ^uint64(0)
	for i, a := range args {
		*[]*uint64{&regs.Rdi, &regs.Rsi, &regs.Rdx, &regs.R10, &regs.R8, &regs.R9}[i] = a
	}
	if err := SetRegs(in.Tid, &regs); err != nil {
		return 0, gone(err)
	}
	res, err := in.run(end, endSig)
	if err == ErrGone {
		return 0, err
	}
	if e := SetRegs(in.Tid, &saved); e != nil && err == nil {
		err = e
	}
	if err != nil {
		return 0, err
	}
	if int64(res) < 0 && int64(res) >= -4095 {
		return 0, unix.Errno(-int64(res))
	}
	return res, nil
}

// gone turns ESRCH from a ptrace request into ErrGone: the thread we hold
// stopped is no longer in its stop, which only SIGKILL does (an exit_group
// of another thread): it is on its way out.
func gone(err error) error {
	if err == unix.ESRCH {
		return ErrGone
	}
	return err
}

// run continues the thread until it stops with endSig at end, after the
// injected system call.
func (in Injection) run(end uint64, endSig int) (uint64, error) {
	sig := 0
	for range 100 {
		if err := Cont(in.Tid, sig); err != nil {
			return 0, gone(err)
		}
		sig = 0
		_, ws, err := Wait(in.Tid, 0)
		if err != nil {
			return 0, err
		}
		if ws.Exited() || ws.Signaled() {
			in.Exited(ws)
			return 0, ErrGone
		}
		var regs unix.PtraceRegs
		if err := GetRegs(in.Tid, &regs); err != nil {
			return 0, err
		}
		s := int(ws.StopSignal())
		if Event(ws) == 0 && s == endSig && regs.Rip == end {
			return regs.Rax, nil
		}
		if Event(ws) == 0 && s != int(unix.SIGTRAP) {
			in.Held(s)
		}
		if Event(ws) == unix.PTRACE_EVENT_EXIT {
			return 0, ErrGone
		}
	}
	return 0, fmt.Errorf("tid %d: injected system call did not complete", in.Tid)
}
