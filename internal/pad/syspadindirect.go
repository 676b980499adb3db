package pad

import "github.com/utap/utap/internal/x86"

// emitIndirect reads capture c (syscalls.Capture.Indirect: pselect6's
// sigset, behind its struct's first word) into its place at r12+off: the
// pointer at the argument plus c.Off, then c.Size bytes where it points,
// all or nothing (the word left -1 for a NULL or unreadable pointer, as
// syscalls.Read). Clobbers everything but rbx, r12.
func emitIndirect(a *x86.Asm, c SysCap, off int) {
	word := x86.Mem{Base: x86.R12, Disp: int32(off)}
	bytes := x86.Mem{Base: x86.R12, Disp: int32(off + 8)}
	next := a.NewLabel()
	capStart(a, c, word, next)
	a.RI(x86.ADD, x86.RAX, int32(c.Off))
	emitReadAll(a, bytes, 8, next) // the pointer, where the bytes will go
	a.Load(x86.RAX, bytes)
	a.RR(x86.TEST, x86.RAX, x86.RAX)
	a.Jcc(x86.E, next)
	emitReadAll(a, bytes, int32(c.Size), next)
	a.StoreI32(word, int32(c.Size))
	a.Bind(next)
}
