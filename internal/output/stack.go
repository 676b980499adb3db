package output

import (
	"strconv"

	"github.com/utap/utap/internal/dec"
	"github.com/utap/utap/probe"
)

// appendStack writes an event's user stack (-k) under its line, a frame a
// line, as strace -k shows it:
//
//	> /usr/lib/x86_64-linux-gnu/libc.so.6(malloc+0x0) [0x7f0c1a2b3c40]
//	> /tmp/prog(main+0x1e) [0x5581d2a0b1a9] at prog.c:12
func appendStack(b []byte, stack []probe.Frame) []byte {
	for i := range stack {
		f := &stack[i]
		b = append(b, " > "...)
		if f.Object != "" {
			b = append(b, f.Object...)
		} else {
			b = append(b, '?')
		}
		b = append(b, '(')
		if f.Func != "" {
			b = append(b, f.Func...)
			b = append(b, "+0x"...)
			b = strconv.AppendUint(b, f.Offset, 16)
		}
		b = append(b, ") [0x"...)
		b = strconv.AppendUint(b, f.Addr, 16)
		b = append(b, ']')
		if f.File != "" {
			b = append(b, " at "...)
			b = append(b, f.File...)
			b = append(b, ':')
			b = dec.AppendInt(b, int64(f.Line))
		}
		b = append(b, '\n')
	}
	return b
}

// appendJSONStack writes `,"stack":[...]` for an event with a stack.
func appendJSONStack(b []byte, stack []probe.Frame) []byte {
	if len(stack) == 0 {
		return b
	}
	b = append(b, `,"stack":[`...)
	for i := range stack {
		f := &stack[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"addr":`...)
		b = dec.AppendUint(b, f.Addr)
		b = append(b, `,"object":`...)
		b = appendJSONString(b, f.Object)
		b = append(b, `,"func":`...)
		b = appendJSONString(b, f.Func)
		b = append(b, `,"offset":`...)
		b = dec.AppendUint(b, f.Offset)
		b = append(b, `,"file":`...)
		b = appendJSONString(b, f.File)
		b = append(b, `,"line":`...)
		b = dec.AppendInt(b, int64(f.Line))
		b = append(b, '}')
	}
	return append(b, ']')
}
