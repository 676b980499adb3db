//go:build linux && amd64

package proc

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// RunToLoaded runs the held child from its exec trap to the point where
// the loader has mapped and relocated every library (IFUNC implementations
// chosen) and no constructor has run, and holds it there: the loader's
// rendezvous, or the entry point of a program loaded without one. A
// temporary int3 stops it there; the loader's calls made before its link
// map is complete are completed for it (the hook only returns), and the
// program's own signals are passed on.
func (c *Child) RunToLoaded() error {
	if err := runToLoaded(c.Pid); err != nil {
		return fmt.Errorf("running %s until its libraries are loaded: %w", c.name, err)
	}
	return nil
}

func runToLoaded(pid int) error {
	var rv *Rendezvous // nil when stopping at the entry point
	stop, err := Entry(pid)
	if err != nil {
		return err
	}
	if r, err := LoaderRendezvous(pid); err == nil && r.BrkReturns {
		stop, rv = r.Brk, &r
	}
	mem, err := os.OpenFile(fmt.Sprintf("/proc/%d/mem", pid), os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer mem.Close()
	var orig [1]byte
	if _, err := mem.ReadAt(orig[:], int64(stop)); err != nil {
		return err
	}
	if _, err := mem.WriteAt([]byte{0xcc}, int64(stop)); err != nil {
		return err
	}
	sig := 0
	for {
		if err := unix.PtraceCont(pid, sig); err != nil {
			return err
		}
		var ws unix.WaitStatus
		if _, err := unix.Wait4(pid, &ws, unix.WALL, nil); err != nil {
			return err
		}
		if !ws.Stopped() {
			return fmt.Errorf("it ended first (status %#x)", ws)
		}
		sig = int(ws.StopSignal())
		var regs unix.PtraceRegs
		if sig != int(unix.SIGTRAP) || unix.PtraceGetRegs(pid, &regs) != nil || regs.Rip != stop+1 {
			continue // the program's own signal: delivered
		}
		sig = 0
		if rv != nil {
			read := func(b []byte, addr uint64) error { _, err := mem.ReadAt(b, int64(addr)); return err }
			passed, err := rv.PassIncomplete(read, &regs)
			if err != nil {
				return err
			}
			if passed {
				if err := unix.PtraceSetRegs(pid, &regs); err != nil {
					return err
				}
				continue
			}
		}
		if _, err := mem.WriteAt(orig[:], int64(stop)); err != nil {
			return err
		}
		regs.Rip = stop
		return unix.PtraceSetRegs(pid, &regs)
	}
}
