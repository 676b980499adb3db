//go:build linux && amd64

package enginetest

import (
	"strings"
	"testing"
)

// TestCLIRefusedStartsNothing: a probe the engine cannot place (a syscall
// instruction, libc's getpid+5) is one error line and exit 2 before the
// command runs, on both engines and with auto (neither can take it).
func TestCLIRefusedStartsNothing(t *testing.T) {
	for _, name := range []string{"ptrace", "uprobe", "auto"} {
		t.Run(name, func(t *testing.T) {
			needBackend(t, name)
			r := utap(t, "run", "--backend", name, "-e", "libc:getpid+5", "--", "sh", "-c", "echo ran")
			oneErrorLine(t, r, "getpid+0x5", "syscall")
			if strings.Contains(r.stdout, "ran") {
				t.Errorf("the command ran: %q", r.stdout)
			}
		})
	}
}
