//go:build linux && amd64

package ptrace

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/probe"
)

// hitEnv is what fetches and conditions see at a hit: the registers read
// once at the stop, and the tracee's memory.
type hitEnv struct {
	regs *unix.PtraceRegs
	abi  probe.ABI
	pid  int
	tid  int
	mem  *proc.Memory
	args []uint64 // the argument registers of abi (loadArgs), in buf
	buf  [9]uint64
	// entry: at a return, the call's argument registers at its entry,
	// when its group kept them (retGroup.args); else nil.
	entry *entryArgs
}

// entryArgs are a call's System V argument registers at its entry.
type entryArgs [probe.MaxEntryArgs]uint64

// entryArgs keeps the argument registers of a call entering g's function,
// nil when no probe of g reads them at the return.
func (g *retGroup) entryArgs(regs *unix.PtraceRegs) *entryArgs {
	if !g.args {
		return nil
	}
	return &entryArgs{regs.Rdi, regs.Rsi, regs.Rdx, regs.Rcx, regs.R8, regs.R9}
}

var errNoArg = errors.New("no such argument")

// Arg returns the n-th (1-based) integer argument at function entry.
func (e *hitEnv) Arg(n int) (uint64, error) {
	r := e.regs
	var regs []uint64
	if e.abi == probe.ABIGoRegs {
		regs = []uint64{r.Rax, r.Rbx, r.Rcx, r.Rdi, r.Rsi, r.R8, r.R9, r.R10, r.R11}
	} else {
		regs = []uint64{r.Rdi, r.Rsi, r.Rdx, r.Rcx, r.R8, r.R9}
	}
	if n < 1 {
		return 0, errNoArg
	}
	if n <= len(regs) {
		return regs[n-1], nil
	}
	// Beyond the registers: the stack, above the return address.
	var b [8]byte
	if err := e.Read(r.Rsp+8*uint64(n-len(regs)), b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

func (e *hitEnv) Builtin(b probe.Builtin) uint64 {
	switch b {
	case probe.BuiltinPID:
		return uint64(e.pid)
	case probe.BuiltinTID:
		return uint64(e.tid)
	case probe.BuiltinRet:
		return e.regs.Rax
	}
	if n := b.EntryArgN(); n > 0 && e.entry != nil {
		return e.entry[n-1]
	}
	return 0
}

// Reg returns a general register at the hit (USDT operands). rip is the
// probed instruction's address: hit and the return paths set regs.Rip
// there before they report.
func (e *hitEnv) Reg(name string) (uint64, error) {
	r := e.regs
	switch name {
	case "rax":
		return r.Rax, nil
	case "rbx":
		return r.Rbx, nil
	case "rcx":
		return r.Rcx, nil
	case "rdx":
		return r.Rdx, nil
	case "rsi":
		return r.Rsi, nil
	case "rdi":
		return r.Rdi, nil
	case "rbp":
		return r.Rbp, nil
	case "rsp":
		return r.Rsp, nil
	case "r8":
		return r.R8, nil
	case "r9":
		return r.R9, nil
	case "r10":
		return r.R10, nil
	case "r11":
		return r.R11, nil
	case "r12":
		return r.R12, nil
	case "r13":
		return r.R13, nil
	case "r14":
		return r.R14, nil
	case "r15":
		return r.R15, nil
	case "rip":
		return r.Rip, nil
	}
	return 0, fmt.Errorf("%w: no register %q", probe.ErrFault, name)
}

func (e *hitEnv) Read(addr uint64, p []byte) error { return e.mem.ReadAt(p, addr) }
