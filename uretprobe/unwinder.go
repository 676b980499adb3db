package uretprobe

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// unwinderLibs are the libraries whose presence means the program may
// unwind its stack through probed frames: C++ exceptions (libstdc++ brings
// libgcc_s) and the unwinder itself.
var unwinderLibs = []string{"libstdc++.so", "libgcc_s.so", "libunwind.so", "libc++.so", "libc++abi.so"}

// UsesUnwinder says whether the program run by argv, or any of pids, links
// a stack unwinder. A kernel uretprobe leaves the trampoline as the return
// address of every live probed frame; an exception unwinding through one
// finds no unwind info for it and the program aborts (std::terminate). The
// uprobe engine then uses RET probes, which leave the stack alone. (The
// ptrace engine instead restores return addresses when an unwinder starts.)
// Objects are checked by DT_NEEDED (the executable and the probed
// objects) or, for running processes, by what they have mapped.
func UsesUnwinder(argv []string, objects []string, pids []int) bool {
	paths := append([]string{}, objects...)
	if len(argv) > 0 {
		if p, err := exec.LookPath(argv[0]); err == nil {
			paths = append(paths, p)
		}
	}
	for _, p := range paths {
		if needsUnwinder(p) {
			return true
		}
	}
	for _, pid := range pids {
		maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
		if err == nil && isUnwinder(string(maps)) {
			return true
		}
	}
	return false
}

func needsUnwinder(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	libs, _ := f.ImportedLibraries()
	return isUnwinder(strings.Join(libs, " "))
}

func isUnwinder(s string) bool {
	for _, lib := range unwinderLibs {
		if strings.Contains(s, lib) {
			return true
		}
	}
	return false
}
