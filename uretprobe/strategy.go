package uretprobe

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/utap/utap/probe"
)

// Method is how a return probe is implemented.
type Method uint8

const (
	// Hijack replaces the return address at entry with a trampoline
	// (ShadowStack for ptrace; a kernel uretprobe for the uprobe engine).
	Hijack Method = iota + 1
	// RetProbes puts an entry-style probe on every RET of the function
	// (RetSites) and pairs it with the entry probe (Calls).
	RetProbes
)

func (m Method) String() string {
	switch m {
	case Hijack:
		return "hijack"
	case RetProbes:
		return "ret-probes"
	}
	return fmt.Sprintf("Method(%d)", uint8(m))
}

// readsReturnAddress lists functions that look at their own return address
// (__builtin_return_address(0)) to find their caller's object: hijacked,
// they would see the trampoline, which belongs to no object (glibc's
// dlopen resolves $ORIGIN and RUNPATH from it, dlsym(RTLD_NEXT) the next
// object after it).
var readsReturnAddress = []string{
	"dlopen", "dlmopen", "dlsym", "dlvsym",
	"__libc_dlopen_mode", "__libc_dlsym", "__libc_dlvsym",
}

// Strategy decides how the return probe of site is implemented:
//   - Go functions are never hijacked (the runtime copies and walks
//     stacks and aborts on a foreign return address: golang/go#22008);
//   - with the CET shadow stack on (shstk, see ShadowStackEnabled) a
//     hijacked `ret` faults; the kernel updates the shadow stack for its own
//     uretprobes (6.10+), so only the ptrace engine passes shstk;
//   - functions that read their own return address keep it;
//   - everything else is hijacked: one trap per return, tail calls seen.
func Strategy(site *probe.Site, shstk bool) Method {
	if site.GoFunc || shstk || slices.Contains(readsReturnAddress, site.Func) {
		return RetProbes
	}
	return Hijack
}

// ShadowStackEnabled reports whether the process runs with the x86 CET
// user shadow stack, from the x86_Thread_features line of
// /proc/PID/status (absent on kernels or CPUs without it).
func ShadowStackEnabled(pid int) (bool, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false, fmt.Errorf("reading the status of process %d: %w", pid, err)
	}
	return shstkIn(b), nil
}

func shstkIn(status []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		features, ok := strings.CutPrefix(sc.Text(), "x86_Thread_features:")
		if ok {
			return slices.Contains(strings.Fields(features), "shstk")
		}
	}
	return false
}
