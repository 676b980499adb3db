package pad

import (
	"github.com/utap/utap/internal/bytecode"
	"github.com/utap/utap/internal/x86"
)

// Captures read before the call (SysCap.Before): the call may change
// their bytes (ioctl's argument, select's sets, accept's address length,
// [in => out]), so reading them after it, as the others, would show what
// it wrote. The pad reads them, before its `syscall`, into an area of
// the stack between its frame and startTSC's words, rsp below it all
// (saveRegs): a signal there, the tracer alive, is held until the pad is
// left (padsignal.go), and one at the `syscall` takes the thread out of
// the pad, its line made by the tracer (padsyssig.go). The record's
// code copies them into the call's area.
//
//	rsp at the site - redZone - 16   startTSC's two words
//	... - BeforeLayout's size        the Before captures
//	... - the frame                  rbx, the frame (both parts')

// sysDown is how far below rsp a system call pad's code keeps rsp and
// its frame: the red zone, startTSC's words, the Before area, the frame.
func sysDown(s Spec, frame int32) int32 {
	_, size := BeforeLayout(s.Sys.Caps)
	return redZone + 16 + int32(size) + frame
}

// startWords is where startTSC's two words are from the frame's base:
// just below the red zone.
func startWords(s Spec, frame int32) int32 { return sysDown(s, frame) - redZone - 16 }

// sysBeforeCode is the pad's code before startTSC that reads the Before
// captures into their area, every register and flag left as it found
// them; and its loads' fix-ups.
func sysBeforeCode(s Spec) ([]byte, []Fixup, error) {
	a, frame, down, err := sysFrame(s)
	if err != nil {
		return nil, nil, err
	}
	emitReadFrame(a, s)
	a.Lea(x86.R12, x86.Mem{Base: x86.RBX, Disp: frame})
	offs, _ := BeforeLayout(s.Sys.Caps)
	for k, c := range s.Sys.Caps {
		if offs[k] >= 0 {
			emitCap(a, c, offs[k])
		}
	}
	restoreRegs(a, down, allRegs)
	code, err := a.Assemble()
	if err != nil {
		return nil, nil, err
	}
	return code, fixupsOf(a), nil
}

// sysFrame starts a part of a system call pad's code: every register
// and flag saved in its frame, rbx the frame, rsp below it (sysDown).
func sysFrame(s Spec) (a *x86.Asm, frame, down int32, err error) {
	if frame, err = frameSize(s); err != nil {
		return nil, 0, 0, err
	}
	a = x86.NewAsm()
	down = sysDown(s, frame)
	saveRegs(a, down, allRegs)
	return a, frame, down, nil
}

// emitReadFrame readies the frame for reads (a system call pad's captures, a
// program's): no pid cached, no fault yet, the tracer's liveness word; loads while
// the tracer lives, as a function pad's reads (a bad buffer faults once,
// and the site's reads are system calls from then on: OffFaulted),
// process_vm_readv after.
func emitReadFrame(a *x86.Asm, s Spec) {
	a.StoreI32(x86.Mem{Base: x86.RBX, Disp: 8 * bytecode.NativePidSlot}, 0)
	a.StoreI32(x86.Mem{Base: x86.RBX, Disp: 8 * slotFaults}, 0)
	emitAlive(a, s)
}

// emitCopy copies n bytes (a multiple of 8) from from to to; clobbers
// rax, rcx, rsi, rdi.
func emitCopy(a *x86.Asm, from, to x86.Mem, n int) {
	a.Lea(x86.RSI, from)
	a.Lea(x86.RDI, to)
	a.MovRI(x86.RCX, uint64(n/8))
	loop := a.NewLabel()
	a.Bind(loop)
	a.Load(x86.RAX, x86.Mem{Base: x86.RSI})
	a.Store(x86.Mem{Base: x86.RDI}, x86.RAX)
	a.RI(x86.ADD, x86.RSI, 8)
	a.RI(x86.ADD, x86.RDI, 8)
	a.RI(x86.SUB, x86.RCX, 1)
	a.Jcc(x86.NE, loop)
}
