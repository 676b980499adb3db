package output

import (
	"strconv"

	"golang.org/x/sys/unix"

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
		b = strconv.AppendInt(b, int64(c.Nr), 10)
		b = append(b, `,"args":[`...)
		n := 6
		if info := syscalls.Lookup(c.Nr); info != nil {
			n = len(info.Args)
		}
		for i := 0; i < n; i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendUint(b, c.Args[i], 10)
		}
		b = append(b, `],"ret":`...)
		if c.Returned {
			b = strconv.AppendInt(b, c.Ret, 10)
		} else {
			b = append(b, "null"...)
		}
		b = append(b, `,"errno":`...)
		if name, ok := syscalls.ErrnoName(c.Ret); ok && c.Returned {
			b = appendJSONString(b, name)
		} else {
			b = append(b, "null"...)
		}
		b = append(b, `,"text":`...)
		b = appendJSONString(b, syscalls.Line(c, &syscalls.Options{StrSize: DefaultStrLen}))
		b = append(b, '}')
	case ev.Kind == "signal":
		b = append(b, `,"text":`...)
		b = appendJSONString(b, syscalls.Signal(ev.Signal))
	case ev.Kind == "exit":
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(ev.Status), 10)
		b = append(b, `,"text":`...)
		b = appendJSONString(b, syscalls.Exit(unix.WaitStatus(ev.Status)))
	}
	return b
}
