package ptrace

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// syscallCode is what an injected system call runs: syscall; int3.
var syscallCode = []byte{0x0f, 0x05, 0xcc}

var errGone = errors.New("process exited")

// inject makes the stopped thread th run one system call and returns its
// result (-errno as an error). It borrows the bytes at the entry point
// (code that runs at most once, at start-up) with every thread of the
// process stopped, and puts them back before any runs on.
func (tr *tracer) inject(th *thread, nr uint64, args ...uint64) (uint64, error) {
	p := th.p
	if p.entry == 0 {
		e, err := auxvEntry(p.pid)
		if err != nil {
			return 0, err
		}
		p.entry = e
	}
	var saved, regs unix.PtraceRegs
	if err := getRegs(th.tid, &saved); err != nil {
		return 0, err
	}
	orig := make([]byte, len(syscallCode))
	if err := p.mem.readByMem(orig, p.entry); err != nil {
		return 0, err
	}
	if err := p.mem.WriteAt(syscallCode, p.entry); err != nil {
		return 0, err
	}
	defer p.mem.WriteAt(orig, p.entry)

	regs = saved
	regs.Rip = p.entry
	regs.Rax = nr
	// orig_rax -1: not inside a system call, so the kernel does not treat
	// the stop as an interrupted call to restart (rewinding rip by 2).
	regs.Orig_rax = ^uint64(0)
	for i, a := range args {
		*[]*uint64{&regs.Rdi, &regs.Rsi, &regs.Rdx, &regs.R10, &regs.R8, &regs.R9}[i] = a
	}
	if err := setRegs(th.tid, &regs); err != nil {
		return 0, err
	}
	res, err := tr.runInjected(th, p.entry+uint64(len(syscallCode)))
	if err == errGone {
		return 0, err
	}
	if e := setRegs(th.tid, &saved); e != nil && err == nil {
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

// runInjected continues th until it traps after the injected code. A
// signal arriving meanwhile is held and delivered when th resumes.
func (tr *tracer) runInjected(th *thread, end uint64) (uint64, error) {
	sig := 0
	for range 100 {
		if err := cont(th.tid, sig); err != nil {
			return 0, err
		}
		sig = 0
		_, ws, err := wait(th.tid, 0)
		if err != nil {
			return 0, err
		}
		if ws.Exited() || ws.Signaled() {
			tr.exited(th.tid, th, ws)
			return 0, errGone
		}
		var regs unix.PtraceRegs
		if err := getRegs(th.tid, &regs); err != nil {
			return 0, err
		}
		s := int(ws.StopSignal())
		if event(ws) == 0 && s == int(unix.SIGTRAP) && regs.Rip == end {
			return regs.Rax, nil
		}
		if event(ws) == 0 && s != int(unix.SIGTRAP) {
			if th.sig == 0 {
				th.sig = s
			} else {
				unix.Tgkill(th.p.pid, th.tid, unix.Signal(s))
			}
		}
		if event(ws) == unix.PTRACE_EVENT_EXIT {
			return 0, errGone
		}
	}
	return 0, fmt.Errorf("tid %d: injected system call did not complete", th.tid)
}
