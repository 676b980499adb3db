//go:build linux && amd64

package rescue

import (
	"runtime"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The bits of a robust futex word besides the owner's thread id.
const (
	futexWaiters   = 0x80000000
	futexOwnerDied = 0x40000000
	// FUTEX_WAIT and FUTEX_WAKE, shared: the tracer's mapping of the
	// memfd is another.
	futexWaitOp = 0
	futexWakeOp = 1
)

func futex(word *uint32, op int, val uint32) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(word)), uintptr(op), uintptr(val), 0, 0, 0)
}

// Announce wakes the supervisor's watch (Table.Watch) once the tracer has
// put its thread's id in the liveness word.
func Announce() {
	if word, _ := Live(); word != nil {
		futex(word, futexWakeOp, 1)
	}
}

// Watch runs Rescue the moment the tracer's ptrace thread dies: the kernel
// marks the liveness word (Live) and wakes the waiter as the thread
// starts to exit, where the supervisor's wait4 returns only once the
// whole tracer is gone (its memory torn down, its tracees let go and
// running into the int3s meanwhile). A tracer that ends cleanly clears
// the word: nothing is undone then.
func (t *Table) Watch() {
	go func() {
		runtime.LockOSThread() // a thread of its own for the futex wait
		word := (*uint32)(unsafe.Pointer(&t.mem[offLive]))
		for {
			v := atomic.LoadUint32(word)
			switch {
			case v&futexOwnerDied != 0:
				t.Rescue()
				return
			case v == 0:
				// Not registered yet (Announce wakes this), or cleared at
				// a clean end: no int3 to undo.
				futex(word, futexWaitOp, 0)
				continue
			case v&futexWaiters == 0 && !atomic.CompareAndSwapUint32(word, v, v|futexWaiters):
				continue
			}
			// The kernel wakes a robust futex's waiters only when the
			// word says there are some (FUTEX_WAITERS).
			futex(word, futexWaitOp, v|futexWaiters)
		}
	}()
}

// Rescue undoes the dead tracer's int3s (Undo) and traces the processes
// that run its seccomp filter until they exit (Tend; seized first, the
// moment the dying tracer lets them go: a filtered call made untraced
// fails), once, on the calling goroutine's thread; a second caller waits
// for the first. It returns what Undo did and the processes it tended.
func (t *Table) Rescue() (restored []Restored, tended []int, err error) {
	t.rescue.Do(func() {
		runtime.LockOSThread()
		t.tended = t.filtered()
		var tg *tending
		if len(t.tended) > 0 {
			tg = seize(t.tended)
		}
		t.Undo()
		if tg != nil {
			if t.OnTend != nil {
				t.OnTend(t.tended)
			}
			t.tendErr = tg.run()
		}
	})
	return t.Undo(), t.tended, t.tendErr
}

// filtered is the listed processes, still the same, that run utap's
// seccomp filter.
func (t *Table) filtered() []int {
	var pids []int
	for i := range entries {
		e := t.at(i)
		if e.pid == 0 || e.flags&filtered == 0 {
			continue
		}
		if start, ok := startTime(int(e.pid)); ok && start == e.start {
			pids = append(pids, int(e.pid))
		}
	}
	return pids
}
