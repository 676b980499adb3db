package pad

import "github.com/utap/utap/internal/x86"

// emitDirentCount counts the linux_dirent64 records of the buffer that
// argument c.Arg points to in the result's bytes, walking their d_reclen
// chain (2 bytes read a record, as the kernel engine's exit program
// does): the capture's word is 8 and its bytes the count; nothing when
// the call failed. A record the buffer cannot hold whole, or an
// unreadable d_reclen, ends the walk. Clobbers everything but rbx, r12.
func emitDirentCount(a *x86.Asm, c SysCap, off int) {
	word := x86.Mem{Base: x86.R12, Disp: int32(off)}
	count := x86.Mem{Base: x86.R12, Disp: int32(off + 8)}
	next, loop, done := a.NewLabel(), a.NewLabel(), a.NewLabel()
	capStart(a, c, word, next)
	a.MovRI(x86.R13, 0) // the next record's offset (SelfRead keeps r13–r15)
	a.MovRI(x86.R14, 0) // the records counted
	a.Bind(loop)
	// Its header up to d_type within the result's bytes.
	a.Lea(x86.RAX, x86.Mem{Base: x86.R13, Disp: 18})
	a.Load(x86.RDX, frameReg(x86.RAX))
	a.RR(x86.CMP, x86.RAX, x86.RDX)
	a.Jcc(x86.A, done)
	a.Load(x86.RAX, frameReg(sysArgRegs[c.Arg]))
	a.RR(x86.ADD, x86.RAX, x86.R13)
	a.RI(x86.ADD, x86.RAX, 16)
	a.StoreI32(count, 0)
	emitReadAll(a, count, 2, done)
	a.Load(x86.RAX, count)
	a.RR(x86.TEST, x86.RAX, x86.RAX)
	a.Jcc(x86.E, done)
	a.RR(x86.ADD, x86.R13, x86.RAX)
	a.RI(x86.ADD, x86.R14, 1)
	a.Jmp(loop)
	a.Bind(done)
	a.Store(count, x86.R14)
	a.StoreI32(word, 8)
	a.Bind(next)
}
