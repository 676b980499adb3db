//go:build linux && amd64

package syscalls

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// ExecCall rebuilds the execve that started a command held at its exec
// (run mode), which no tracer sees: it ran before the tracer took hold.
// Its arguments are still on the new stack: the file name at AT_EXECFN
// (execfn), argv at sp+8 and envp after argv's NULL, where the kernel put
// them for the new image. nil when the stack cannot be read.
func ExecCall(sp, execfn uint64, strsize int, read ReadFunc) *Call {
	var b [8]byte
	if read(sp, b[:]) != nil {
		return nil
	}
	argc := binary.LittleEndian.Uint64(b[:])
	argv := sp + 8
	c := &Call{Nr: unix.SYS_EXECVE, Args: [6]uint64{execfn, argv, argv + 8*(argc+1)}, Returned: true}
	if info := Lookup(c.Nr); info != nil {
		c.Entry = ReadSide(info, c.Args, 0, 0, false, strsize, read)
	}
	return c
}
