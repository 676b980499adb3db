//go:build linux && amd64

package ptrace

// unwinders lists the entry points of the unwinders a process may run on
// its own stack: libgcc's (C++ exceptions, pthread_cancel's forced unwind,
// glibc's backtrace) and libunwind's. An unwinder finds each frame's
// unwind info from its return address, so it must never meet the
// trampoline: the ptrace engine puts an internal breakpoint at each of
// these (in whichever loaded object defines it) and calls the hitting
// thread's shadowStack.Restore there. The frames restored lose their
// return events; the program unwinds exactly as untraced.
var unwinders = []string{
	"_Unwind_RaiseException",
	"_Unwind_Resume",
	"_Unwind_Resume_or_Rethrow",
	"_Unwind_ForcedUnwind",
	"_Unwind_Backtrace",
	"_ULx86_64_init_local", // libunwind's unw_init_local
	"_Ux86_64_init_local",
}
