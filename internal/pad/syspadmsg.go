package pad

import (
	"github.com/utap/utap/internal/bytecode"
	"github.com/utap/utap/internal/x86"
)

// A msghdr capture (sendmsg's, recvmsg's: syscalls.Capture.Msg) in the
// stop path's layout (syscalls' readMsg): the 56-byte msghdr, then each
// part it points to as an 8-byte count and its bytes: the name (at most
// msgMaxName), the iovecs (an Iov capture's elements, msg_iovlen of them,
// at most sysIovElems) and the control data (at most msgMaxCtl).
const (
	msgSize    = 56
	msgMaxName = 128
	msgMaxCtl  = 256
	// The msghdr's fields.
	msgName, msgNameLen = 0, 8
	msgIov, msgIovLen   = 16, 24
	msgCtl, msgCtlLen   = 32, 40
)

// MsgRoom is the room of a msghdr capture whose elements hold at most
// lim bytes each (SysCap.Max).
func MsgRoom(lim int) int { return msgSize + 8 + msgMaxName + 8 + IovRoom(lim) + 8 + msgMaxCtl }

// msgScratch is the frame slot that holds where the iovecs' count goes.
const msgScratch = iovScratch + 1

// emitMsg reads a msghdr capture into its place at r12+off: nothing
// (the word left -1) when the msghdr cannot be read, else every part,
// an unreadable one empty, as readMsg. Clobbers everything but rbx, r12.
func emitMsg(a *x86.Asm, c SysCap, off int) {
	word := x86.Mem{Base: x86.R12, Disp: int32(off)}
	h := func(at int32) x86.Mem { return x86.Mem{Base: x86.R12, Disp: int32(off+8) + at} }
	next := a.NewLabel()
	capStart(a, c, word, next)
	emitReadAll(a, h(0), msgSize, next)
	a.Lea(x86.R13, h(msgSize))
	emitMsgPart(a, h(msgName), h(msgNameLen), true, msgMaxName)
	// The iovecs: their count's place kept, the elements after it.
	a.Store(scratch(msgScratch), x86.R13)
	a.RI(x86.ADD, x86.R13, 8)
	a.Load(x86.RAX, h(msgIov))
	a.Store(scratch(iovScratch), x86.RAX)
	a.Load(x86.R14, h(msgIovLen))
	minU(a, x86.R14, sysIovElems)
	emitIovBound(a, c.LenRet)
	emitIovLoop(a, c.IovLim)
	a.Load(x86.RAX, scratch(msgScratch))
	a.MovRR(x86.RDX, x86.R13)
	a.RR(x86.SUB, x86.RDX, x86.RAX)
	a.RI(x86.SUB, x86.RDX, 8)
	a.Store(x86.Mem{Base: x86.RAX}, x86.RDX)
	emitMsgPart(a, h(msgCtl), h(msgCtlLen), false, msgMaxCtl)
	a.Lea(x86.RAX, h(0))
	a.MovRR(x86.RDX, x86.R13)
	a.RR(x86.SUB, x86.RDX, x86.RAX)
	a.Store(word, x86.RDX)
	a.Bind(next)
}

// emitMsgPart reads at r13 the part of a msghdr whose pointer is at ptr
// and its length at length (4 bytes with len32): a count, then
// min(length, max) bytes, all or none (a count of 0 for a NULL, empty or
// unreadable part). r13 ends past it.
func emitMsgPart(a *x86.Asm, ptr, length x86.Mem, len32 bool, max int) {
	local, remote := scratch(4), scratch(6)
	skip := a.NewLabel()
	a.StoreI32(x86.Mem{Base: x86.R13}, 0)
	a.Load(x86.RDX, length)
	if len32 {
		a.RI(x86.SHL, x86.RDX, 32)
		a.RI(x86.SHR, x86.RDX, 32)
	}
	minU(a, x86.RDX, uint64(max))
	a.RR(x86.TEST, x86.RDX, x86.RDX)
	a.Jcc(x86.E, skip)
	a.Load(x86.RAX, ptr)
	a.RR(x86.TEST, x86.RAX, x86.RAX)
	a.Jcc(x86.E, skip)
	a.Store(remote, x86.RAX)
	a.Store(x86.Mem{Base: x86.RBX, Disp: remote.Disp + 8}, x86.RDX)
	a.Lea(x86.RAX, x86.Mem{Base: x86.R13, Disp: 8})
	a.Store(local, x86.RAX)
	a.Store(x86.Mem{Base: x86.RBX, Disp: local.Disp + 8}, x86.RDX)
	a.MovRR(x86.R14, x86.RDX) // SelfRead keeps r13–r15
	bytecode.SelfRead(a, local, remote, false)
	a.RR(x86.CMP, x86.RAX, x86.R14)
	a.Jcc(x86.NE, skip)
	a.Store(x86.Mem{Base: x86.R13}, x86.RAX)
	a.RR(x86.ADD, x86.R13, x86.RAX)
	a.Bind(skip)
	a.RI(x86.ADD, x86.R13, 8)
}
