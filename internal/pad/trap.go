package pad

import "github.com/utap/utap/internal/x86"

// Trap pads. An int3 left in a process whose tracer died is a fatal
// SIGTRAP, and a tracer killed by SIGKILL takes none out. A breakpoint
// of the tracer's own that must stop the thread (the loader's hook,
// _dl_debug_state: a dlopen's new objects get their probes there) can
// instead be a pad that traps only while the tracer lives: it stops the
// thread at an int3 (Layout.Trap) when the ring's liveness word holds
// the tracer's thread id, which the kernel replaces by FUTEX_OWNER_DIED
// the moment that thread dies (OffTracer), and runs on otherwise. The
// tracer resumes the thread where it stopped, so the pad restores the
// registers and runs the displaced instructions after either.

// emitTrap is a trap pad's probe code, done its end; it returns the
// int3's label.
func emitTrap(a *x86.Asm, s Spec, done x86.Label) x86.Label {
	a.MovRI(x86.RSI, s.Ring)
	emitIfGone(a, done)
	at := a.NewLabel()
	a.Bind(at)
	a.Raw(0xcc)
	return at
}
