package pad

import (
	"github.com/utap/utap/internal/bytecode"
	"github.com/utap/utap/internal/syscalls"
	"github.com/utap/utap/internal/x86"
)

// iovScratch is the frame slot after the reads' iovecs that holds the
// address of the next iovec to read (frameSize makes room for it).
const iovScratch = strScratch

// emitIov reads an iovec capture into its place at r12+off, in the stop
// path's layout (syscalls' readIovAt): for each element the iovec, the
// bytes taken, the bytes; an element whose iovec cannot be read ends it,
// one whose bytes cannot be read takes none, its count IovUnread. The
// word is the bytes written, left -1 when no element was (the stop
// path's nil). r13 is where the next element goes, r14 the elements
// left, r15 the bytes the result leaves (-1: no bound); SelfRead keeps
// them. Clobbers everything but rbx, r12.
func emitIov(a *x86.Asm, c SysCap, off int) {
	word := x86.Mem{Base: x86.R12, Disp: int32(off)}
	next := a.NewLabel()
	// readv's are read even when the call failed: its elements without
	// their bytes (strace shows their addresses then).
	start := c
	start.Exit = c.Exit && !c.LenRet
	capStart(a, start, word, next)
	a.Store(scratch(iovScratch), x86.RAX)
	// r14 = min(count, sysIovElems), unsigned.
	a.Load(x86.R14, frameReg(sysArgRegs[c.LenArg]))
	minU(a, x86.R14, sysIovElems)
	emitIovBound(a, c.LenRet)
	a.Lea(x86.R13, x86.Mem{Base: x86.R12, Disp: int32(off + 8)})
	emitIovLoop(a, c.IovLim)
	a.Lea(x86.RAX, x86.Mem{Base: x86.R12, Disp: int32(off + 8)})
	a.MovRR(x86.RDX, x86.R13)
	a.RR(x86.SUB, x86.RDX, x86.RAX)
	a.Jcc(x86.E, next)
	a.Store(word, x86.RDX)
	a.Bind(next)
}

// emitIovBound sets r15, the bytes the elements may hold all told: with
// lenRet the result's (readv's), 0 when it failed, else -1 (no bound).
func emitIovBound(a *x86.Asm, lenRet bool) {
	a.MovRI(x86.R15, ^uint64(0))
	if lenRet {
		read := a.NewLabel()
		a.Load(x86.R15, frameReg(x86.RAX))
		a.RR(x86.TEST, x86.R15, x86.R15)
		a.Jcc(x86.NS, read)
		a.MovRI(x86.R15, 0)
		a.Bind(read)
	}
}

// emitIovLoop reads the elements of the iovec array at scratch
// iovScratch to r13 on: r14 of them, each at most lim bytes and r15 all
// told (-1: no bound). r13 ends past the last element written.
func emitIovLoop(a *x86.Asm, lim int) {
	local, remote := scratch(4), scratch(6)
	localLen := x86.Mem{Base: x86.RBX, Disp: local.Disp + 8}
	remoteLen := x86.Mem{Base: x86.RBX, Disp: remote.Disp + 8}
	loop, done, stored := a.NewLabel(), a.NewLabel(), a.NewLabel()
	a.Bind(loop)
	a.RR(x86.TEST, x86.R14, x86.R14)
	a.Jcc(x86.E, done)
	// The iovec, 16 bytes, to where the element starts.
	a.Load(x86.RAX, scratch(iovScratch))
	a.Store(remote, x86.RAX)
	a.StoreI32(remoteLen, 16)
	a.Store(local, x86.R13)
	a.StoreI32(localLen, 16)
	bytecode.SelfRead(a, local, remote, false)
	a.RI(x86.CMP, x86.RAX, 16)
	a.Jcc(x86.NE, done)
	// rdx = min(iov_len, IovLim), then min(rdx, r15) when bounded.
	a.Load(x86.RDX, x86.Mem{Base: x86.R13, Disp: 8})
	minU(a, x86.RDX, uint64(lim))
	unbounded := a.NewLabel()
	a.RR(x86.TEST, x86.R15, x86.R15)
	a.Jcc(x86.S, unbounded)
	within := a.NewLabel()
	a.RR(x86.CMP, x86.RDX, x86.R15)
	a.Jcc(x86.B, within)
	a.MovRR(x86.RDX, x86.R15)
	a.Bind(within)
	a.RR(x86.SUB, x86.R15, x86.RDX)
	a.Bind(unbounded)
	a.Store(x86.Mem{Base: x86.R13, Disp: 16}, x86.RDX)
	a.RR(x86.TEST, x86.RDX, x86.RDX)
	a.Jcc(x86.E, stored)
	// The bytes, all or none.
	a.Store(remoteLen, x86.RDX)
	a.Store(localLen, x86.RDX)
	a.Load(x86.RAX, x86.Mem{Base: x86.R13})
	a.Store(remote, x86.RAX)
	a.Lea(x86.RAX, x86.Mem{Base: x86.R13, Disp: 24})
	a.Store(local, x86.RAX)
	bytecode.SelfRead(a, local, remote, false)
	a.Load(x86.RDX, x86.Mem{Base: x86.R13, Disp: 16})
	a.RR(x86.CMP, x86.RAX, x86.RDX)
	a.Jcc(x86.E, stored)
	// Unreadable: no bytes, the count says so (strace shows the address).
	unread := a.NewLabel()
	a.MovRI(x86.RDX, syscalls.IovUnread)
	a.Store(x86.Mem{Base: x86.R13, Disp: 16}, x86.RDX)
	a.Jmp(unread)
	a.Bind(stored)
	a.Load(x86.RDX, x86.Mem{Base: x86.R13, Disp: 16})
	a.RR(x86.ADD, x86.R13, x86.RDX)
	a.Bind(unread)
	a.RI(x86.ADD, x86.R13, 24)
	a.Load(x86.RAX, scratch(iovScratch))
	a.RI(x86.ADD, x86.RAX, 16)
	a.Store(scratch(iovScratch), x86.RAX)
	a.RI(x86.SUB, x86.R14, 1)
	a.Jmp(loop)

	a.Bind(done)
}
