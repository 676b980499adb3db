package output

import (
	"encoding/binary"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/dec"
	"github.com/utap/utap/probe"
)

// ltraceEnd writes a signal or a process's end in a trace of functions
// only (Options.LtraceEnds) as ltrace does:
//
//	[pid 1234] raise(10 <no return ...>
//	[pid 1234] --- SIGUSR1 (User defined signal 1) ---
//	[pid 1234] exit(3 <no return ...>
//	[pid 1234] +++ exited (status 3) +++
//
// A call of the same thread whose line the signal or the end cuts shows
// "<no return ...>"; another thread's, "<unfinished ...>" as always.
func (t *text) ltraceEnd(ev *probe.Event) error {
	b := t.w.room()
	if p := t.pending; p != nil && !p.sys && p.tid == ev.TID {
		t.pending = nil
		b = append(b, " <no return ...>\n"...)
	} else {
		b = t.endPending(b)
	}
	b = t.stamp(t.appendPID(b, ev.TID), ev.TimeNs)
	switch ev.Kind {
	case "signal":
		sig := 0
		if len(ev.Signal) >= 4 {
			sig = int(int32(binary.LittleEndian.Uint32(ev.Signal)))
		}
		b = append(b, "--- "...)
		b = append(b, signalName(sig)...)
		b = append(b, " ("...)
		b = append(b, signalText(sig)...)
		b = append(b, ") ---\n"...)
	default:
		switch st := unix.WaitStatus(ev.Status); {
		case st.Signaled():
			b = append(b, "+++ killed by "...)
			b = append(b, signalName(int(st.Signal()))...)
			b = append(b, " +++\n"...)
		default:
			b = append(b, "+++ exited (status "...)
			b = dec.AppendInt(b, int64(st.ExitStatus()))
			b = append(b, ") +++\n"...)
		}
	}
	return t.flushLine(b)
}

// signalName is SIGUSR1 for 10, SIG34 for a signal without a name.
func signalName(sig int) string {
	if n := unix.SignalName(unix.Signal(sig)); n != "" {
		return n
	}
	return "SIG" + strconv.Itoa(sig)
}

// signalText is strsignal's text, as ltrace prints it: "User defined
// signal 1".
func signalText(sig int) string {
	s := unix.Signal(sig).String()
	if strings.HasPrefix(s, "signal ") {
		return "Real-time signal " + strconv.Itoa(sig-34)
	}
	if s == "" {
		return "Unknown signal"
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
