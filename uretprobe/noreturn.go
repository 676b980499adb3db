package uretprobe

import "strings"

// NoReturnProbe says why fn's return cannot be probed, "" if it can. fn
// is a symbol, with any @version or @plt and glibc's __GI_ alias prefix.
// PlanReturn refuses these functions; the CLI shows their calls' entries
// alone. A hijacked return takes the word at [rsp] at the entry:
//
//   - A function that returns twice, as setjmp does: once when called,
//     again when longjmp or setcontext goes back to the context it saved,
//     whose program counter is that word. Hijacked, the second return
//     comes through the trampoline with no call left to return to, and
//     the program is killed, or jumps to another frame's caller (bash's
//     `[` looped). Its RETs are no help either: glibc's setjmp tail-calls
//     __sigjmp_save. (vfork's two returns are the parent's and its
//     child's, each with its own frames: the engines handle it.)
//   - Code entered without a call: the process's entry point, where that
//     word is argc (perl and python then misread their arguments), and
//     the return from a signal handler, where it begins the signal frame
//     rt_sigreturn restores.
//
// A switch: the text writer asks at every entry.
func NoReturnProbe(fn string) string {
	if i := strings.IndexByte(fn, '@'); i >= 0 {
		fn = fn[:i]
	}
	switch strings.TrimPrefix(fn, "__GI_") {
	case "setjmp", "_setjmp", "__setjmp", "sigsetjmp", "__sigsetjmp",
		"getcontext", "__getcontext", "swapcontext", "__swapcontext", "savectx":
		return "it returns twice, as setjmp does, and a return probe would break the longjmp back to it"
	case "_start", "_dl_start_user":
		return "it is where the process starts: nothing called it, and the word a return probe would take is argc"
	case "__restore_rt":
		return "it is a signal handler's return to the kernel: nothing called it, and the word a return probe would take is the signal frame's"
	}
	return ""
}

// Unpaired says whether fn's calls show their entries alone
// (NoReturnProbe).
func Unpaired(fn string) bool { return NoReturnProbe(fn) != "" }
