//go:build linux && amd64

package uprobe

import (
	"github.com/cilium/ebpf/asm"

	"github.com/utap/utap/internal/syscalls"
)

// getdents returns up to its count argument of linux_dirent64 records (a
// 32 KiB buffer is common), more than a record's capture holds
// (sysMaxCapture). The exit program counts them all by walking the
// d_reclen chain of the returned bytes in the tracee, a bounded loop
// (each step reads 2 bytes; the buffer was just written by the kernel, so
// its pages are present; sysMaxDirents steps at most, where a 64 KiB
// buffer of the shortest names holds 2730), and keeps the count at sysOffDirents, where
// fullDirents (syscall_user.go) finds it.
const (
	sysOffDirents  = 120  // pt_regs' orig_ax slot, free: getdents' entry count
	sysDirents     = 2    // sysConf flag: the call returns dirents in arg 2
	sysMaxDirents  = 2048 // the verifier follows 8192 pending branches, 3 a step; a 32 KiB buffer holds 1365
	direntRecLenAt = 16   // d_reclen's offset in linux_dirent(64)
)

// hasDirents says whether some traced call returns dirents.
func (ss *sysSpec) hasDirents() bool {
	for nr := range ss.calls {
		if syscalls.DirentCapture(nr) >= 0 {
			return true
		}
	}
	return false
}

// countDirents emits the walk, at exit after the captures: R6 holds the
// record; R7 and R9 are used, R8 is reloaded from sysSlotConf.
func (ss *sysSpec) countDirents(g *progGen) {
	if !ss.hasDirents() {
		return
	}
	skip, loop, done := g.label(), g.label(), g.label()
	g.emit(
		storeImm64(asm.R6, sysOffDirents, 0),
		asm.LoadMem(asm.R1, asm.R8, confOffFlags, asm.Word),
		asm.And.Imm(asm.R1, sysDirents),
		asm.JEq.Imm(asm.R1, 0, skip),
		asm.LoadMem(asm.R1, asm.R6, regAX, asm.DWord),
		asm.JSLE.Imm(asm.R1, 0, skip),
		asm.Mov.Imm(asm.R7, 0), // offset of the next record
		asm.Mov.Imm(asm.R8, 0), // records counted
		asm.Mov.Imm(asm.R9, 0), // steps: the verifier's bound
	)
	g.mark(loop)
	g.emit(
		asm.Mov.Reg(asm.R3, asm.R7),
		asm.Add.Imm(asm.R3, 18), // a record's header up to d_type
		asm.LoadMem(asm.R1, asm.R6, regAX, asm.DWord),
		asm.JGT.Reg(asm.R3, asm.R1, done),
		storeImm64(asm.RFP, slotTmp, 0),
		asm.Mov.Reg(asm.R1, asm.RFP),
		asm.Add.Imm(asm.R1, slotTmp),
		asm.Mov.Imm(asm.R2, 2),
		asm.LoadMem(asm.R3, asm.R6, regSI, asm.DWord),
		asm.Add.Reg(asm.R3, asm.R7),
		asm.Add.Imm(asm.R3, direntRecLenAt),
		asm.FnProbeReadUser.Call(), // a failed read leaves 0: the end
		asm.LoadMem(asm.R1, asm.RFP, slotTmp, asm.Half),
		asm.JEq.Imm(asm.R1, 0, done),
		asm.Add.Reg(asm.R7, asm.R1),
		asm.Add.Imm(asm.R8, 1),
		asm.Add.Imm(asm.R9, 1),
		asm.JLT.Imm(asm.R9, sysMaxDirents, loop),
	)
	g.mark(done)
	g.emit(asm.StoreMem(asm.R6, sysOffDirents, asm.R8, asm.DWord))
	g.mark(skip)
	g.emit(asm.LoadMem(asm.R8, asm.RFP, sysSlotConf, asm.DWord))
}
