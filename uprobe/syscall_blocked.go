//go:build linux && amd64

package uprobe

import (
	"encoding/binary"
	"time"

	"github.com/utap/utap/internal/syscalls"
	"github.com/utap/utap/probe"
)

// A call's record comes when it returns: a thread blocked in one (a read
// of an empty pipe, a wait4) would show nothing, where strace and the
// ptrace engine show "read(0, " at once. Every blockedEvery the reader
// looks at the open map (the calls in progress, with what their entry
// read): a call in progress for blockedAge gets its entry event, and its
// record ends the line when it returns ("<... read resumed>" when other
// lines came between). A call with a condition gets none: the condition
// is known at its return.

const (
	blockedEvery = 100 * time.Millisecond
	blockedAge   = 50 * time.Millisecond
)

// blockedCalls remembers, per thread, the start of the call whose entry
// event was made and of the last call that returned: an entry still in
// the map after its record was read (the exit program deletes it after
// sending the record) is not shown again.
type blockedCalls struct {
	shown, returned map[int]int64
	last            time.Time
}

// sysReturned notes that tid's call started at start returned.
func (b *blockedCalls) sysReturned(tid int, start int64) {
	if b.returned != nil {
		b.returned[tid] = start
	}
}

// scan emits the entry events of the calls blocked since the last look.
func (b *blockedCalls) scan(y *sysSession, emit func(*probe.Event)) {
	if y == nil || y.open == nil || time.Since(b.last) < blockedEvery {
		return
	}
	b.last = time.Now()
	if b.shown == nil {
		b.shown, b.returned = map[int]int64{}, map[int]int64{}
	}
	now := monotonicNow()
	var key uint64
	var val []byte
	for it := y.open.Iterate(); it.Next(&key, &val); {
		tid := int(uint32(key))
		start := int64(binary.LittleEndian.Uint64(val[sysOffTime:]))
		if now-start < int64(blockedAge) || b.shown[tid] == start || b.returned[tid] >= start {
			continue
		}
		var ev probe.Event
		stk := y.stk
		y.stk = nil // decode would take the call's stack, which its return shows
		err := y.decode(val, &ev)
		y.stk = stk
		if err != nil || ev.Sys.Returned || !syscalls.Plain(&y.sites[y.calls[ev.Sys.Nr].site]) {
			continue
		}
		b.shown[tid] = start
		ev.Kind, ev.TimeNs, ev.DurationNs, ev.Sys.Exit = probe.Entry.String(), start, 0, nil
		emit(&ev)
	}
}
