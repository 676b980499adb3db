//go:build linux && amd64

package ptrace

import (
	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
)

// inject makes the stopped thread th run one system call (proc.Injection)
// at the process's entry point, with every thread of the process stopped;
// if th turns out to be exiting, another stopped thread of the process
// makes it.
func (tr *tracer) inject(th *thread, nr uint64, args ...uint64) (uint64, error) {
	return tr.injectUD(th, false, nr, args...)
}

// injectUD is inject, ending the call with a ud2 if ud (proc.Injection.UD2).
func (tr *tracer) injectUD(th *thread, ud bool, nr uint64, args ...uint64) (uint64, error) {
	p := th.p
	if p.entry == 0 {
		e, err := proc.Entry(p.pid)
		if err != nil {
			return 0, err
		}
		p.entry = e
	}
	if th.inSyscall {
		if th = tr.injectionThread(p); th == nil {
			return 0, proc.ErrGone
		}
	}
	for {
		res, err := tr.injectIn(th, ud, nr, args...)
		if err != proc.ErrGone {
			return res, err
		}
		// th was exiting (its own exit, or another thread's exit_group,
		// raced the injection): any other stopped thread can make the call.
		th.dead = true
		if th = tr.injectionThread(p); th == nil || tr.procs[p.pid] != p {
			return 0, err
		}
	}
}

func (tr *tracer) injectIn(th *thread, ud bool, nr uint64, args ...uint64) (uint64, error) {
	p := th.p
	in := proc.Injection{Tid: th.tid, Mem: p.mem, At: p.entry,
		Held: func(sig int) {
			// The watcher's wake-up can come during an injection (a
			// trace cancelled while pads go in): delivered, it would
			// leave the process in a group-stop.
			var si proc.Siginfo
			if proc.GetSiginfo(th.tid, &si) == nil && tr.wakeStop(th, sig, &si) {
				return
			}
			if th.sig == 0 {
				th.sig = sig
			} else {
				resend(p.pid, th.tid, sig)
			}
		},
		Exited: func(ws unix.WaitStatus) { tr.exited(th.tid, th, ws) },
		UD2:    ud,
	}
	res, err := in.Syscall(nr, args...)
	if err != proc.ErrGone && !ud {
		tr.sigs.trapTaken(th) // its int3 is a trap like ours
	}
	return res, err
}
