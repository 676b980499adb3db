// Package rescue takes a dead tracer's breakpoints out of the processes
// it traced.
//
// The utap a user starts supervises the tracer (cmd/utap/supervise.go).
// A tracer killed by a signal it cannot catch (SIGKILL: the OOM killer, a
// kill -9 of its pid) leaves its int3s in the code of the processes it
// traced, and each would kill its process at the next hit with SIGTRAP.
// The tracer lists the processes it traces in a Table shared with the
// supervisor (a memfd); when the tracer dies of a signal, the supervisor
// restores, in each process still the same, every int3 byte of its
// executable file mappings the file does not hold, and of its vDSO every
// one the supervisor's own does not (Undo). Pads need nothing: they run
// without the tracer.
//
// Diffing against the files, rather than a log of every byte the tracer
// wrote, keeps the tracer's side to a line at a process's start and end,
// and cannot restore a stale byte: what a file holds is the original.
//
// The supervisor learns of the death from a robust futex word on the
// tracer's ptrace thread's list (Live, Watch), as that thread starts to
// exit. A process that runs utap's seccomp filter (which cannot come out)
// it traces until it exits (Tend): untraced, the filter's calls fail.
//
// Not undone: a thread stopped at an int3 when the tracer died (the
// kernel delivers its SIGTRAP as it detaches it), one hitting an int3
// before the supervisor is done, a filtered call made between the
// tracer's detach and the supervisor's seize, a return address an int3
// return probe hijacked.
package rescue
