package pad

import (
	"github.com/utap/utap/internal/bytecode"
	"github.com/utap/utap/internal/x86"
)

// emitIndirect reads capture c (syscalls.Capture.Indirect: pselect6's
// sigset, behind its struct's first word) into its place at r12+off: the
// pointer at the argument plus c.Off, then c.Size bytes where it points,
// all or nothing (the word left -1 for a NULL or unreadable pointer, as
// syscalls.Read). Clobbers everything but rbx, r12.
func emitIndirect(a *x86.Asm, c SysCap, off int) {
	word := x86.Mem{Base: x86.R12, Disp: int32(off)}
	bytes := x86.Mem{Base: x86.R12, Disp: int32(off + 8)}
	local, remote := scratch(4), scratch(6)
	next := a.NewLabel()
	capStart(a, c, word, next)
	a.RI(x86.ADD, x86.RAX, int32(c.Off))
	read := func(n int32) {
		a.Store(remote, x86.RAX)
		a.StoreI32(x86.Mem{Base: x86.RBX, Disp: remote.Disp + 8}, n)
		a.Lea(x86.RAX, bytes)
		a.Store(local, x86.RAX)
		a.StoreI32(x86.Mem{Base: x86.RBX, Disp: local.Disp + 8}, n)
		bytecode.SelfRead(a, local, remote, false)
		a.RI(x86.CMP, x86.RAX, n)
		a.Jcc(x86.NE, next)
	}
	read(8) // the pointer, where the bytes will go
	a.Load(x86.RAX, bytes)
	a.RR(x86.TEST, x86.RAX, x86.RAX)
	a.Jcc(x86.E, next)
	read(int32(c.Size))
	a.StoreI32(word, int32(c.Size))
	a.Bind(next)
}
