//go:build linux && amd64

package proc

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Rendezvous is the dynamic loader's debugger interface in a process
// (struct r_debug of <link.h>, the one gdb and ltrace use): the loader
// calls Brk (_dl_debug_state) before and after every change of its link
// map, with the map's state in the int32 at State. At start-up the last
// such call, with RTConsistent, comes once every library is mapped and
// relocated (IFUNC implementations chosen) and before any constructor
// runs: the earliest point where every probe can resolve.
type Rendezvous struct {
	Brk   uint64 // runtime address of _dl_debug_state
	State uint64 // runtime address of r_debug.r_state
	// BrkReturns says Brk's code only returns (ret, or endbr64; ret), so
	// a tracer stopped there by an int3 may complete the call itself: pop
	// the return address into rip.
	BrkReturns bool
}

// RTConsistent is r_state when the link map is complete.
const RTConsistent = 0

// PassIncomplete is what a tracer does at its int3 on Brk: when the link
// map is not complete yet, it completes the hook's call for the tracee
// (BrkReturns: pops the return address into regs' rip) and reports true,
// so the tracer sets regs and waits for the next call. read reads the
// tracee's memory.
func (r Rendezvous) PassIncomplete(read func(b []byte, addr uint64) error, regs *unix.PtraceRegs) (bool, error) {
	var b [8]byte
	if err := read(b[:4], r.State); err != nil {
		return false, err
	}
	if binary.LittleEndian.Uint32(b[:4]) == RTConsistent {
		return false, nil
	}
	if err := read(b[:], regs.Rsp); err != nil {
		return false, err
	}
	regs.Rip, regs.Rsp = binary.LittleEndian.Uint64(b[:]), regs.Rsp+8
	return true, nil
}

// rStateOff is r_state's offset in struct r_debug on x86_64: int
// r_version, then the pointers r_map and r_brk.
const rStateOff = 24

// LoaderRendezvous finds the loader's Rendezvous in process pid, which
// may be held at its exec: the kernel maps the loader with the program.
func LoaderRendezvous(pid int) (Rendezvous, error) {
	maps, err := Maps(pid)
	if err != nil {
		return Rendezvous{}, err
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return Rendezvous{}, Error(pid, "executable", err)
	}
	interp, err := interpreter(exe)
	if err != nil {
		return Rendezvous{}, err
	}
	f, err := elf.Open(interp)
	if err != nil {
		return Rendezvous{}, err
	}
	defer f.Close()
	var loads []elf.ProgHeader
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			loads = append(loads, p.ProgHeader)
		}
	}
	bias, ok := BiasIn(maps, interp, loads)
	if !ok {
		return Rendezvous{}, fmt.Errorf("%s is not mapped in process %d", interp, pid)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		return Rendezvous{}, fmt.Errorf("%s: %w", interp, err)
	}
	var r Rendezvous
	for _, s := range syms {
		switch {
		case s.Value == 0:
		case s.Name == "_dl_debug_state":
			r.Brk = bias + s.Value
			r.BrkReturns = onlyReturns(f, s.Value)
		case s.Name == "_r_debug":
			r.State = bias + s.Value + rStateOff
		}
	}
	if r.Brk == 0 || r.State == 0 {
		return Rendezvous{}, fmt.Errorf("%s: no _dl_debug_state or _r_debug", interp)
	}
	return r, nil
}

// interpreter returns the PT_INTERP of exe: its dynamic loader.
func interpreter(exe string) (string, error) {
	f, err := elf.Open(exe)
	if err != nil {
		return "", err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				return "", fmt.Errorf("%s: reading PT_INTERP: %w", exe, err)
			}
			return string(bytes.TrimRight(b, "\x00")), nil
		}
	}
	return "", fmt.Errorf("%s has no dynamic loader (static)", exe)
}

// onlyReturns says whether the code at link-time address addr of f is ret,
// or endbr64; ret.
func onlyReturns(f *elf.File, addr uint64) bool {
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || addr < p.Vaddr || addr >= p.Vaddr+p.Filesz {
			continue
		}
		b := make([]byte, 5)
		n, _ := p.ReadAt(b, int64(addr-p.Vaddr))
		b = b[:n]
		return bytes.HasPrefix(b, []byte{0xc3}) || bytes.HasPrefix(b, []byte{0xf3, 0x0f, 0x1e, 0xfa, 0xc3})
	}
	return false
}
