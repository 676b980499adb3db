//go:build linux && amd64

package ptrace

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/utap/utap/ssol"
)

// ssol.Memory is the tracee memory a shadowStack reads and writes return
// addresses in (the ptrace engine's /proc/PID/mem accessor).

// defaultShadowLimit bounds a thread's hijacked frames. The kernel stops at 64
// nested uretprobes; a tracer in user space can afford more, and a deeper
// call is simply not hijacked (counted in retStats.Missed).
const defaultShadowLimit = 1024

// redZone is the System V AMD64 red zone below rsp, which a leaf function may
// use without moving rsp: Restore never writes there.
const redZone = 128

// Sentinel errors of the shadow stack.
var (
	// errTooDeep: the call was not hijacked because the thread already has
	// the maximum number of hijacked frames; its return is not reported.
	errTooDeep = errors.New("too many nested return probes")
	// errLost: the trampoline was reached, or found as a return address,
	// with no frame recording where it should go.
	errLost = errors.New("return address not found on the shadow stack")
)

// retFrame is one hijacked call.
type retFrame struct {
	OrigRet   uint64 // the return address the call pushed, replaced by the trampoline
	SP        uint64 // rsp at entry: the address of the return-address slot
	Site      int    // the engine's index of the probed site
	EntryTime int64  // CLOCK_MONOTONIC ns at entry, for durations
	// Args are the argument registers at entry, kept when a probe of
	// the function reads them at the return (output arguments).
	Args *entryArgs
	// Chained marks a tail call: the function was entered with the
	// trampoline already as its return address, so it returns through the
	// frame below it (same slot, same OrigRet) and both report then.
	Chained bool
}

// retStats counts return probes that will not be reported.
type retStats struct {
	Missed  uint64 // calls not hijacked (errTooDeep, errLost)
	Dropped uint64 // frames discarded without a return: longjmp, exceptions, stack switches
}

// shadowStack records one thread's hijacked return addresses, innermost
// last. The ptrace engine calls Push at a return probe's entry breakpoint,
// Pop when the thread traps on the trampoline, and Restore before the
// thread's frames can no longer be tracked (detach, a forked child, an
// unwinder about to walk the stack).
//
// One per thread. A forked child inherits the forking thread's hijacked
// slots: Clone the stack for it (-f), or Restore it in the child's memory
// before detaching. After exec, discard every stack.
//
// Invariant: a slot that holds the trampoline is either recorded here or
// about to be dead stack; frames dropped as dead get their slot restored when
// it still holds the trampoline, so that a misjudged frame (for example one on
// another stack, left by sigaltstack or swapcontext) loses its return event
// but still returns to its caller.
type shadowStack struct {
	trampoline uint64
	limit      int
	frames     []retFrame
	out        []retFrame // Pop's result, reused
	// padded says whether a return address is an in-process return
	// pad's (nil: no pads): see Push.
	padded func(uint64) bool
	retStats
}

// newShadowStack returns an empty shadow stack for a thread of a process
// whose trampoline (the int3 return probes return to) is at trampoline.
// limit <= 0 means defaultShadowLimit.
func newShadowStack(trampoline uint64, limit int) *shadowStack {
	if limit <= 0 {
		limit = defaultShadowLimit
	}
	return &shadowStack{trampoline: trampoline, limit: limit}
}

// Len returns the number of recorded frames.
func (s *shadowStack) Len() int { return len(s.frames) }

// Frames returns the recorded frames, outermost first. The slice is the
// stack's own: read it, don't keep it.
func (s *shadowStack) Frames() []retFrame { return s.frames }

// Clone returns a copy, for a forked child that inherits the parent
// thread's hijacked stack.
func (s *shadowStack) Clone() *shadowStack {
	c := *s
	c.frames = append([]retFrame(nil), s.frames...)
	c.out = nil
	return &c
}

// Push hijacks the return address of a call that just entered a probed
// function, with rsp = f.SP pointing at the return address (f.Site and
// f.EntryTime set; OrigRet and Chained are filled in here).
//
// First the frames the thread left without returning (longjmp, exceptions)
// are dropped: those whose slot is below rsp. If the return address already
// is the trampoline, the call is a tail call: it chains to the frame of that
// slot and nothing is written. Otherwise the trampoline is written at rsp.
// On error nothing was hijacked and the call's return will not be reported.
func (s *shadowStack) Push(mem ssol.Memory, f retFrame) (chained bool, err error) {
	ra, err := s.read(mem, f.SP)
	if err != nil {
		s.Missed++
		return false, err
	}
	chained = ra == s.trampoline
	// A new call pushes its return address below every live slot; a tail
	// call reuses the slot of the frame it replaces (uprobes'
	// arch_uretprobe_is_alive, RP_CHECK_CALL vs RP_CHECK_CHAIN_CALL).
	// A slot holding a return pad was hijacked in-process over the
	// trampoline by a padded function tail-called from this frame's (the
	// pad returns to the trampoline): the frame there still lives (perl's
	// op_append_elem -> newLISTOP -> ck_null died here).
	overPad := !chained && s.padded != nil && s.padded(ra)
	s.dropAbove(mem, func(e *retFrame) bool {
		return e.SP < f.SP || (!chained && !overPad && e.SP == f.SP)
	})
	if chained {
		n := len(s.frames)
		if n == 0 || s.frames[n-1].SP != f.SP {
			s.Missed++
			return true, fmt.Errorf("%w: tail call at rsp %#x", errLost, f.SP)
		}
		f.OrigRet = s.frames[n-1].OrigRet
	} else {
		f.OrigRet = ra
	}
	f.Chained = chained
	if len(s.frames) >= s.limit {
		s.Missed++
		return chained, fmt.Errorf("%w (%d)", errTooDeep, s.limit)
	}
	if !chained {
		if err := s.write(mem, f.SP, s.trampoline); err != nil {
			s.Missed++
			return false, err
		}
	}
	s.frames = append(s.frames, f)
	return chained, nil
}

// Pop handles a trap on the trampoline, with sp the thread's rsp at the trap
// (the returning `ret` has popped the slot; the int3 leaves rsp alone). It returns the frames that returned,
// innermost first: the frame whose slot was at sp-8 and the tail-called frames
// chained to it. The engine sets rip to frames[0].OrigRet and reports each.
// Frames above them are dropped as skipped. The result is valid until the
// next call on s.
func (s *shadowStack) Pop(mem ssol.Memory, sp uint64) ([]retFrame, error) {
	// Slots grow towards the innermost frame: look from there for the one
	// `ret` just popped.
	top := -1
	for i := len(s.frames) - 1; i >= 0 && s.frames[i].SP <= sp-8; i-- {
		if s.frames[i].SP == sp-8 {
			top = i
			break
		}
	}
	if top < 0 {
		// `ret imm16` pops more than the slot. Fall back to the kernel's
		// rule (handle_trampoline): the innermost chain returned if the
		// chain below it is still alive at sp, else it was skipped.
		return s.popByLiveness(mem, sp)
	}
	for len(s.frames) > top+1 {
		s.drop(mem)
	}
	return s.popChain(), nil
}

func (s *shadowStack) popByLiveness(mem ssol.Memory, sp uint64) ([]retFrame, error) {
	for len(s.frames) > 0 {
		base := s.chainBase(len(s.frames) - 1)
		if base == 0 || sp <= s.frames[base-1].SP {
			return s.popChain(), nil
		}
		// Skipped frames sit below sp: dead stack, safe to restore.
		for len(s.frames) > base {
			s.drop(mem)
		}
	}
	return nil, fmt.Errorf("%w: trampoline hit at rsp %#x", errLost, sp)
}

// chainBase returns the index of the non-chained frame that frame i's tail
// call chain starts at.
func (s *shadowStack) chainBase(i int) int {
	for i > 0 && s.frames[i].Chained {
		i--
	}
	return i
}

// popChain removes the innermost frame and those it is chained to.
func (s *shadowStack) popChain() []retFrame {
	base := s.chainBase(len(s.frames) - 1)
	s.out = s.out[:0]
	for i := len(s.frames) - 1; i >= base; i-- {
		s.out = append(s.out, s.frames[i])
	}
	s.frames = s.frames[:base]
	return s.out
}

// dropAbove drops innermost frames while dead reports them dead.
func (s *shadowStack) dropAbove(mem ssol.Memory, dead func(*retFrame) bool) {
	for len(s.frames) > 0 && dead(&s.frames[len(s.frames)-1]) {
		s.drop(mem)
	}
}

// drop discards the innermost frame, putting its return address back if
// its slot still holds the trampoline. Only called for slots below the
// thread's rsp at an entry or trampoline stop, where nothing of the thread
// lives (the callee has not run; a caller keeps nothing below a call).
func (s *shadowStack) drop(mem ssol.Memory) {
	f := s.frames[len(s.frames)-1]
	s.frames = s.frames[:len(s.frames)-1]
	s.Dropped++
	if !f.Chained {
		s.restore(mem, f)
	}
}

func (s *shadowStack) restore(mem ssol.Memory, f retFrame) (bool, error) {
	ra, err := s.read(mem, f.SP)
	if err != nil || ra != s.trampoline {
		return false, err
	}
	return true, s.write(mem, f.SP, f.OrigRet)
}

// Restore writes every hijacked return address back and empties the stack;
// rsp is the thread's stack pointer now (it may be stopped anywhere). A slot
// is written only if it still holds the trampoline, and never inside the red
// zone below rsp, which a leaf function may be using. It returns how many
// slots were restored and the first error; it goes on after errors.
func (s *shadowStack) Restore(mem ssol.Memory, rsp uint64) (int, error) {
	var n int
	var first error
	for i := len(s.frames) - 1; i >= 0; i-- {
		f := s.frames[i]
		if f.Chained || (f.SP < rsp && f.SP+8 > rsp-redZone) {
			continue
		}
		ok, err := s.restore(mem, f)
		if ok && err == nil {
			n++
		}
		if err != nil && first == nil {
			first = err
		}
	}
	s.Dropped += uint64(len(s.frames))
	s.frames = s.frames[:0]
	return n, first
}

func (s *shadowStack) read(mem ssol.Memory, addr uint64) (uint64, error) {
	var b [8]byte
	if err := mem.ReadAt(b[:], addr); err != nil {
		return 0, fmt.Errorf("reading the return address at %#x: %w", addr, err)
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

func (s *shadowStack) write(mem ssol.Memory, addr, v uint64) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	if err := mem.WriteAt(b[:], addr); err != nil {
		return fmt.Errorf("writing the return address at %#x: %w", addr, err)
	}
	return nil
}
