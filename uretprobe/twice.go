package uretprobe

import "strings"

// ReturnsTwice says whether fn (a symbol, with any @version or @plt and
// glibc's __GI_ alias prefix) returns twice, as setjmp does: once when
// called, again when longjmp or setcontext goes back to the context it
// saved, whose program counter is the return address at its entry.
// Hijacked, that address is the trampoline's, and the second return comes
// through it with no call left to return to: the program is killed, or
// jumps to another frame's caller. Its RETs are no help either: glibc's
// setjmp tail-calls __sigjmp_save. So PlanReturn refuses it. (vfork's two
// returns are the parent's and its child's, each with its own frames: the
// engines handle it.) A switch: the text writer asks at every entry.
func ReturnsTwice(fn string) bool {
	if i := strings.IndexByte(fn, '@'); i >= 0 {
		fn = fn[:i]
	}
	switch strings.TrimPrefix(fn, "__GI_") {
	case "setjmp", "_setjmp", "__setjmp", "sigsetjmp", "__sigsetjmp",
		"getcontext", "__getcontext", "swapcontext", "__swapcontext", "savectx":
		return true
	}
	return false
}
