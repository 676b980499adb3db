//go:build linux && amd64

package syscalls

import "github.com/utap/utap/internal/dec"

// Formatter writes calls into a caller's buffer, its decoding state
// reused from call to call: a writer of millions of lines allocates no
// state per line. One goroutine uses one.
type Formatter struct {
	x ctx
}

// AppendCall appends the call up to its result, Head and Tail in one
// decoding: `openat(AT_FDCWD, "/etc/hostname", O_RDONLY)`.
func (f *Formatter) AppendCall(b []byte, c *Call, o *Options) []byte {
	x := &f.x
	x.init(c, o)
	args, _ := x.args()
	b = append(b, x.in.displayName()...)
	b = append(b, '(')
	for i, a := range args {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, a...)
	}
	b = append(b, ')')
	x.c = nil // keep no call alive
	return b
}

// AppendResult appends what follows " = ": "3", "0x7f12345000",
// "-1 ENOENT (No such file or directory)", or "?" when the call did not
// return.
func (f *Formatter) AppendResult(b []byte, c *Call, o *Options) []byte {
	x := &f.x
	x.init(c, o)
	if c.Returned && !isErr(c.Ret) && x.in.plainResult && !x.o.Raw {
		b = dec.AppendInt(b, c.Ret) // most calls: no decoding
	} else {
		b = append(b, x.result()...)
	}
	x.c = nil
	return b
}
