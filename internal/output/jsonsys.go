package output

import (
	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/dec"
	"github.com/utap/utap/internal/syscalls"
	"github.com/utap/utap/probe"
)

// appendJSONSys adds what a system call, signal or exit event has beyond
// the common fields: the raw arguments, the errno's name and strace's text.
func appendJSONSys(b []byte, ev *probe.Event) []byte {
	switch {
	case ev.Sys != nil:
		c := ev.Sys
		b = append(b, `,"syscall":{"nr":`...)
		b = dec.AppendInt(b, int64(c.Nr))
		b = append(b, `,"args":[`...)
		n := 6
		if info := syscalls.Lookup(c.Nr); info != nil {
			n = len(info.Args)
		}
		for i := 0; i < n; i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = dec.AppendUint(b, c.Args[i])
		}
		b = append(b, `],"ret":`...)
		if c.Returned {
			b = dec.AppendInt(b, c.Ret)
		} else {
			b = append(b, "null"...)
		}
		b = append(b, `,"errno":`...)
		if name, ok := syscalls.ErrnoName(c.Ret); ok && c.Returned {
			b = appendJSONString(b, name)
		} else {
			b = append(b, "null"...)
		}
		if c.Detached {
			b = append(b, `,"detached":true`...)
		}
		b = append(b, `,"text":`...)
		b = appendJSONString(b, syscalls.Line(c, &syscalls.Options{StrSize: DefaultStrLen}))
		b = append(b, '}')
	case ev.Kind == "signal":
		b = append(b, `,"text":`...)
		b = appendJSONString(b, syscalls.Signal(ev.Signal))
	case ev.Kind == "exit":
		b = append(b, `,"status":`...)
		b = dec.AppendInt(b, int64(ev.Status))
		b = append(b, `,"text":`...)
		b = appendJSONString(b, syscalls.Exit(unix.WaitStatus(ev.Status)))
	}
	return b
}
