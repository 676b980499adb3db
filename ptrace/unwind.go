//go:build linux && amd64

package ptrace

import (
	"strings"

	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/probe"
)

// unwinders puts an internal breakpoint on every unwinder entry point
// (unwinders) of the objects mapped now: an unwinder finds each
// frame's unwind info from its return address and must never meet the
// trampoline. A thread entering one has its hijacked return addresses put
// back (retHit); those calls lose their return events and the program
// unwinds exactly as untraced. An unwinder loaded later by dlopen (glibc
// loads libgcc_s for pthread_cancel and backtrace) gets its breakpoint
// when the loader reports it (loader.go).
func (pl *planner) unwinders() error {
	seen := map[string]bool{}
	for _, m := range pl.ms {
		if !strings.HasPrefix(m.Path, "/") || !m.Exec() || seen[m.Path] {
			continue
		}
		if o, _ := execObject(m); !pl.planning(o) {
			continue
		}
		seen[m.Path] = true
		oi := pl.tr.ld.objInfo(m.Path)
		if oi == nil {
			continue
		}
		is := proc.FileMatcher(m.Path)
		for _, u := range oi.unwinders {
			um, ok := proc.MappingOf(pl.ms, is, u.off)
			if !ok {
				continue
			}
			addr := um.Start + u.off - um.Offset
			s := &probe.Site{Func: u.name, FuncAddr: addr, Addr: addr}
			bp, err := pl.bp(s, addr)
			if err != nil {
				return err
			}
			bp.unwinder = true
			if u.size > 0 {
				bp.padFn = &probe.Site{Object: m.Path, Func: u.name, FuncAddr: u.value, FuncSize: u.size, Addr: u.value}
			}
		}
	}
	return nil
}
