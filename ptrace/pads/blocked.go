package pads

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/internal/syscalls"
	"github.com/utap/utap/probe"
)

// A call made in-process writes its record when it returns: a thread
// blocked in one (a read of an empty pipe, a wait4) would show nothing,
// where the stop path and strace show "read(0, " at once. Every
// blockedEvery the drainer reads each traced thread's /proc/TID/syscall:
// a thread blocked at a system call pad's `syscall` gets the call's
// entry event then, as the stop path makes at entry; its record ends the
// line when the call returns ("<... read resumed>" when other lines came
// between). A call with a condition gets none: the pad decides at its
// return whether it shows.

// blockedEvery is how often the threads are looked at: a blocked call
// shows within it.
const blockedEvery = 100 * time.Millisecond

// blockedScan finds the threads blocked in a call made in-process.
type blockedScan struct {
	pcs   map[uint64]uint32 // the address after a pad's `syscall` → its site id
	shown map[int]blocked   // by tid: the call whose entry event was made
	last  time.Time
}

// blocked is a blocked call as /proc shows it.
type blocked struct {
	nr     int
	args   [6]uint64
	sp, pc uint64
}

// add records where site id's pad makes its call (the `syscall` at pc).
func (b *blockedScan) add(pc uint64, id uint32) {
	if b.pcs == nil {
		b.pcs, b.shown = map[uint64]uint32{}, map[int]blocked{}
	}
	b.pcs[pc+2] = id
}

// returned forgets tid's entry event: its call's record came.
func (b *blockedScan) returned(tid int) {
	if len(b.shown) > 0 {
		delete(b.shown, tid)
	}
}

// scan makes the entry events of the calls blocked since the last look,
// under d.mu, once the rings are drained; a ring with records again by
// the time its thread is seen blocked waits for the next look (its
// records go first).
func (b *blockedScan) scan(d *Drainer) {
	if len(b.pcs) == 0 || d.emit == nil || d.tally || d.mute.Load() || time.Since(b.last) < blockedEvery {
		return
	}
	b.last = time.Now()
	for _, r := range d.rings {
		if !r.Mapped() || r.Quiet || r.gone {
			continue
		}
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", r.Pid))
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			c, ok := blockedIn(r.Pid, tid)
			id, at := b.pcs[c.pc]
			if !ok || !at || int(id) >= len(d.sites) || d.sites[id].Sys == nil || d.sites[id].Sys.Nr != c.nr || !d.sites[id].Sys.plain {
				continue
			}
			if b.shown[tid] == c {
				continue // shown at an earlier look, still blocked
			}
			if behind, open := anyBehind([]*Ring{r}); behind || open {
				// The thread's records before its call, committed
				// before it blocked, came after the drain that
				// called this scan: they go first, its entry at
				// the next look.
				continue
			}
			b.shown[tid] = c
			d.emit(entryEvent(d.sites[id], r.Pid, tid, c))
		}
	}
}

// entryEvent is the entry event of call c of thread tid, blocked in site
// s's pad: its arguments, and the memory its line shows at entry.
func entryEvent(s *Site, pid, tid int, c blocked) *probe.Event {
	sys := &probe.Syscall{Nr: c.nr, Args: c.args}
	if info := syscalls.Lookup(c.nr); info != nil {
		mem := proc.ReadOnly(pid)
		sys.Entry = syscalls.ReadSide(info, c.args, 0, c.sp, false, s.Sys.strsize, func(a uint64, b []byte) error { return mem.ReadAt(b, a) })
	}
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return &probe.Event{TimeNs: ts.Nano(), PID: pid, TID: tid, Probe: s.Probe, Func: s.Func, Kind: "entry",
		ProbeIndex: s.Index, Sys: sys}
}

// blockedIn reads /proc/PID/task/TID/syscall: "nr a0 ... a5 sp pc" while
// the thread is in a system call, "running" or "-1 sp pc" otherwise.
func blockedIn(pid, tid int) (blocked, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/syscall", pid, tid))
	f := strings.Fields(string(b))
	if err != nil || len(f) != 9 {
		return blocked{}, false
	}
	nr, err := strconv.Atoi(f[0]) // decimal; the rest in hex
	if err != nil || nr < 0 {
		return blocked{}, false
	}
	var v [8]uint64
	for i, s := range f[1:] {
		if v[i], err = strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64); err != nil {
			return blocked{}, false
		}
	}
	return blocked{nr: nr, args: [6]uint64(v[:6]), sp: v[6], pc: v[7]}, true
}
