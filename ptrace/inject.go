//go:build linux && amd64

package ptrace

import (
	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
)

// inject makes the stopped thread th run one system call (proc.Injection)
// at the process's entry point, with every thread of the process stopped.
func (tr *tracer) inject(th *thread, nr uint64, args ...uint64) (uint64, error) {
	p := th.p
	if p.entry == 0 {
		e, err := proc.Entry(p.pid)
		if err != nil {
			return 0, err
		}
		p.entry = e
	}
	in := proc.Injection{Tid: th.tid, Mem: p.mem, At: p.entry,
		Held: func(sig int) {
			if th.sig == 0 {
				th.sig = sig
			} else {
				unix.Tgkill(p.pid, th.tid, unix.Signal(sig))
			}
		},
		Exited: func(ws unix.WaitStatus) { tr.exited(th.tid, th, ws) },
	}
	return in.Syscall(nr, args...)
}
