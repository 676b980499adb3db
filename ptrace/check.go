//go:build linux && amd64

package ptrace

import (
	"fmt"

	"github.com/utap/utap/probe"
	"github.com/utap/utap/ssol"
)

// Check reports the first site whose instruction, as the file has it, the
// engine cannot run out of line, or whose fetches and condition do not
// compile, before anything starts: a refused probe must not leave the
// command run untraced. What only the process shows (code in a writable
// mapping, rseq critical sections, another tracer's int3) is still refused
// as probes go in.
func Check(sites []probe.Site) error {
	for i := range sites {
		s := &sites[i]
		if s.Syscall {
			continue // evaluated by the reference evaluator at each stop
		}
		if _, err := compileSite(s); err != nil {
			return err
		}
		if (s.Spec != nil && s.Spec.Kind == probe.Return) || len(s.Insn) == 0 {
			continue // planned from the function's code in the process
		}
		if _, err := ssol.Analyze(s.Insn, s.Addr); err != nil {
			return fmt.Errorf("%s: %w: %w", siteName(s), ErrRefused, err)
		}
	}
	return nil
}
