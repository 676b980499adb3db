package output

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/dec"
	"github.com/utap/utap/internal/syscalls"
	"github.com/utap/utap/probe"
)

// straceColumn is where strace aligns " = result" on short lines.
const straceColumn = 40

// detachedEnd ends the line of a call the trace ended in, as strace's.
const detachedEnd = " <detached ...>\n"

// spaces pads a line to straceColumn in one append.
var spaces = []byte("                                        ")

// sysLine writes a system call, signal or exit event as strace does:
//
//	openat(AT_FDCWD, "/etc/hostname", O_RDONLY|O_CLOEXEC) = 3
//	read(3,  <unfinished ...>
//	<... read resumed>"vm\n", 131072) = 3
//	--- SIGCHLD {si_signo=SIGCHLD, ...} ---
//	+++ exited with 0 +++
//	wait4(-1,  <detached ...>
//
// An entry event is written as it comes and ended by its return, or by
// " <unfinished ...>" when another line comes first.
func (t *text) sysLine(ev *probe.Event) error {
	b := t.w.room()
	if t.comms != nil && execed(ev) {
		delete(t.comms, ev.TID) // its line may end a pending entry's
	}
	if p := t.pending; p != nil && p.sys && ev.Kind == "return" && ev.Sys != nil && p.tid == ev.TID && p.fn == ev.Func {
		t.pending = nil
		delete(t.sysOpen, ev.TID)
		if ev.Sys.Detached {
			return t.flushLine(append(b, detachedEnd...))
		}
		start, so := len(b), t.sysOptions(ev)
		b = append(b, syscalls.Tail(t.o.call(ev), so)...)
		b = t.sysResult(b, ev, p.col+len(b)-start, so)
		return t.flushLine(appendStack(b, ev.Stack))
	}
	b = t.endPending(b)
	start := len(b)
	open := "" // the call this thread has open (its entry shown), if any
	if len(t.sysOpen) > 0 {
		open = t.sysOpen[ev.TID]
	}
	at := ev.TimeNs
	if ev.Kind == "return" && ev.Sys != nil && open != ev.Func {
		at -= ev.DurationNs // a whole call on one line: stamped with its start, as strace's
	}
	b = t.sysPrefix(b, ev, at)
	switch {
	case ev.Kind == "signal":
		b = append(b, syscalls.Signal(ev.Signal)...)
		b = append(b, '\n')
	case ev.Kind == "exit":
		b = append(b, syscalls.Exit(unix.WaitStatus(ev.Status))...)
		b = append(b, '\n')
	case ev.Kind == "entry":
		b = append(b, syscalls.Head(t.o.call(ev), t.sysOptions(ev))...)
		t.pend.set(ev.TID, ev.Func, ev.Stack, true, len(b)-start)
		t.pending = &t.pend
		t.sysOpen[ev.TID] = ev.Func
		return t.flushLine(b)
	case open == ev.Func:
		delete(t.sysOpen, ev.TID)
		b = append(b, "<... "...)
		b = append(b, ev.Func...)
		b = append(b, " resumed>"...)
		if ev.Sys.Detached {
			return t.flushLine(append(b, detachedEnd...))
		}
		so := t.sysOptions(ev)
		b = append(b, syscalls.Tail(t.o.call(ev), so)...)
		b = t.sysResult(b, ev, len(b)-start, so)
	case ev.Sys != nil && ev.Sys.Detached:
		b = append(b, syscalls.Head(t.o.call(ev), t.sysOptions(ev))...)
		b = append(b, detachedEnd...)
	default:
		// A whole call on one line, the common case: decoded once, into
		// the line, by the writer's Formatter.
		so := t.sysOptions(ev)
		b = t.fmtr.AppendCall(b, t.o.call(ev), so)
		b = t.sysResult(b, ev, len(b)-start, so)
	}
	b = appendStack(b, ev.Stack)
	return t.flushLine(b)
}

// sysPrefix starts a strace line: with -f or once a second thread is
// seen (as strace does), the pid, then the time stamps.
func (t *text) sysPrefix(b []byte, ev *probe.Event, at int64) []byte {
	if !t.tids[ev.TID] { // a read: most lines come from a thread seen
		t.tids[ev.TID] = true
	}
	if t.o.StracePIDs || len(t.tids) > 1 {
		switch {
		case t.o.Sys.Comm:
			b = t.appendPIDComm(b, ev)
		case t.o.FilePIDs:
			// strace's "%-5d ": the pid's column five wide.
			n := len(b)
			b = dec.AppendInt(b, int64(ev.TID))
			for len(b)-n < 5 {
				b = append(b, ' ')
			}
			b = append(b, ' ')
		default:
			b = t.appendPID(b, ev.TID)
		}
	}
	return t.stamp(b, at) // after the pid, as strace writes them
}

// appendPIDComm writes "[pid N<comm>] " (strace -Y; "N<comm> " into a
// file, FilePIDs): the thread's name
// as /proc shows it, read once per thread and again after its exec
// (execed).
func (t *text) appendPIDComm(b []byte, ev *probe.Event) []byte {
	if t.comms == nil {
		t.comms = map[int]string{}
	}
	c, ok := t.comms[ev.TID]
	if !ok || execed(ev) {
		c = threadComm(ev.PID, ev.TID)
		t.comms[ev.TID] = c
	}
	if !t.o.FilePIDs {
		b = append(b, "[pid "...)
	}
	b = dec.AppendInt(b, int64(ev.TID))
	if c != "" {
		b = append(append(append(b, '<'), c...), '>')
	}
	if t.o.FilePIDs {
		return append(b, ' ') // strace -Y into a file: "N<comm> "
	}
	return append(b, "] "...)
}

// execed says whether ev is a successful exec's return: its thread's
// name changed (strace shows the new one from that line on).
func execed(ev *probe.Event) bool {
	return ev.Sys != nil && ev.Kind == "return" && ev.Sys.Returned && ev.Sys.Ret == 0 && (ev.Func == "execve" || ev.Func == "execveat")
}

// threadComm is a thread's name (/proc/PID/task/TID/comm), "" once it
// is gone.
func threadComm(pid, tid int) string {
	s, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(s), "\n")
}

// sysResult pads to strace's column and writes "= result", -T's time and
// the line end; col is the line's width so far, so the call's display
// options (sysOptions).
func (t *text) sysResult(b []byte, ev *probe.Event, col int, so *syscalls.Options) []byte {
	b = append(b, ' ')
	column := straceColumn
	if t.o.Sys.Column != 0 {
		column = t.o.Sys.Column
	}
	for col+1 < column {
		n := min(column-col-1, len(spaces))
		b = append(b, spaces[:n]...)
		col += n
	}
	b = append(b, "= "...)
	b = t.fmtr.AppendResult(b, t.o.call(ev), so)
	if t.o.Durations && ev.Sys != nil && ev.Sys.Returned {
		b = append(b, " <"...)
		b = strconv.AppendFloat(b, float64(ev.DurationNs)/1e9, 'f', 6, 64)
		b = append(b, '>')
	}
	for i := range ev.Args {
		if i == 0 {
			b = append(b, " {"...)
		} else {
			b = append(b, ", "...)
		}
		b = formatValue(b, &ev.Args[i], t.o.StrLen)
		if i == len(ev.Args)-1 {
			b = append(b, '}')
		}
	}
	b = append(b, '\n')
	if d := &t.o.Sys; ev.Sys != nil && (d.DumpRead != nil || d.DumpWrite != nil) {
		b = syscalls.AppendDump(b, ev.Sys, d.DumpRead, d.DumpWrite) // -e read=, -e write=
	}
	return b
}

// call is the decoder's view of a system call event.
func (o *Options) call(ev *probe.Event) *syscalls.Call {
	if ev.Sys == nil {
		return &syscalls.Call{Nr: -1}
	}
	return ev.Sys
}

// sysOptions are the decoder's display options: -s, -y, -X, -e raw=
// and -e verbose=. Without -y they are the writer's, reused: valid until
// the next call.
func (t *text) sysOptions(ev *probe.Event) *syscalls.Options {
	o := &t.o
	so := &t.so
	if o.FdPath != nil {
		so = &syscalls.Options{}
	}
	*so = syscalls.Options{StrSize: max(o.StrLen, 0), Xlat: o.Sys.Xlat, Hex: o.Sys.Hex}
	if c := o.call(ev); c.Nr >= 0 {
		so.Raw = o.Sys.Raw != nil && o.Sys.Raw(c.Nr)
		so.Terse = o.Sys.Terse != nil && o.Sys.Terse(c.Nr)
		so.Full = o.Sys.Full != nil && o.Sys.Full(c.Nr)
	}
	if o.FdPath != nil {
		pid, paths := ev.PID, o.call(ev).FdPaths
		so.FdPath = func(fd int) string {
			if p, ok := paths[fd]; ok {
				return p
			}
			return o.FdPath(pid, fd)
		}
	}
	return so
}
