package bytecode

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/probe"
)

// arena is real memory of the test process with holes in it: the Go legs
// read it through testEnv, the eBPF leg with bpf_probe_read_user, which sees
// the same mappings, so faults are the same on every leg.
//
//	page 0      PROT_NONE
//	pages 1–3   data: strings, pointers, random bytes
//	page 4      PROT_NONE (guard: strings running into it fault)
//	pages 5–6   data
//	page 7      PROT_NONE
type arena struct {
	mem   []byte
	base  uint64
	sites []uint64 // addresses of interesting strings and pointers
	ptrs  []uint64 // addresses of slots holding pointers into the arena
	guard uint64   // first byte of page 4
}

const arenaPages = 8

var strPool = []string{"", "a", "ab", "/etc/passwd", "hello", "hello world", "abc", strings.Repeat("a", probe.MaxStrLen), strings.Repeat("b", probe.MaxStrLen-1), "\x80\xff"}

func readable(page int) bool { return page >= 1 && page <= 6 && page != 4 }

var (
	arenaOnce sync.Once
	theArena  *arena
	arenaErr  error
)

// testArena maps the arena once per process (the eBPF leg and the Go legs
// share it).
func testArena(t testing.TB) *arena {
	arenaOnce.Do(func() { theArena, arenaErr = newArena() })
	if arenaErr != nil {
		t.Fatal(arenaErr)
	}
	return theArena
}

func newArena() (*arena, error) {
	mem, err := unix.Mmap(-1, 0, arenaPages*pageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, err
	}
	a := &arena{mem: mem, base: uint64(uintptr(unsafe.Pointer(&mem[0]))), guard: 0}
	a.guard = a.base + 4*pageSize
	r := rand.New(rand.NewSource(1))
	r.Read(mem)
	put := func(off int, s string, nul bool) {
		copy(mem[off:], s)
		if nul {
			mem[off+len(s)] = 0
		}
		a.sites = append(a.sites, a.base+uint64(off))
	}
	off := pageSize + 64
	for _, s := range strPool {
		put(off, s, true)
		off += len(s) + 1 + r.Intn(8)
	}
	// A run of 300 'a' and one of 'b' crossing into page 2.
	put(2*pageSize-150, strings.Repeat("a", 300), true)
	// Strings that end at the guard page: one with its NUL, one without.
	put(4*pageSize-12, "edge", true)
	put(4*pageSize-3, "abc", false)
	put(7*pageSize-4, "ab", true)
	// Pointer slots: pointers to the sites, so *(u64*)p chains stay inside.
	for i := range 64 {
		slot := 3*pageSize + 8*i
		binary.LittleEndian.PutUint64(mem[slot:], a.sites[r.Intn(len(a.sites))])
		a.ptrs = append(a.ptrs, a.base+uint64(slot))
	}
	for _, p := range []int{0, 4, 7} {
		if err := unix.Mprotect(mem[p*pageSize:(p+1)*pageSize], unix.PROT_NONE); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// ok says whether [addr, addr+n) is readable.
func (a *arena) ok(addr uint64, n int) bool {
	if addr < a.base || addr+uint64(n) < addr || addr+uint64(n) > a.base+uint64(len(a.mem)) {
		return false
	}
	for p := (addr - a.base) / pageSize; p <= (addr+uint64(n)-1-a.base)/pageSize; p++ {
		if !readable(int(p)) {
			return false
		}
	}
	return true
}

func (a *arena) inside(addr uint64) bool {
	return addr >= a.base && addr < a.base+uint64(len(a.mem))
}

// mapped says whether this process can read the byte at addr.
func mapped(addr uint64) bool {
	var b [1]byte
	n, err := unix.ProcessVMReadv(unix.Getpid(),
		[]unix.Iovec{{Base: &b[0], Len: 1}},
		[]unix.RemoteIovec{{Base: uintptr(addr), Len: 1}}, 0)
	return err == nil && n == 1
}

// testEnv is the registers of a hit (SysV: arguments 1–6, then the stack
// above sp) over the arena.
type testEnv struct {
	a        *arena
	regs     [6]uint64
	sp       uint64
	ret      uint64
	pid, tid uint64
	// gp holds the general registers that are neither arguments nor sp
	// nor rax (ret), in regNames order; the others read those fields.
	gp [len(regNames)]uint64
	// elsewhere is set by a read outside the arena of memory this process
	// has mapped (a truncated pointer landing in the test binary's data):
	// the Go legs fault there, bpf_probe_read_user does not, so the eBPF
	// leg cannot be compared on that hit.
	elsewhere bool
}

// Reg reads a register the way a hit's does: arguments, ret and sp are
// the same values Arg, Builtin and the stack see.
func (e *testEnv) Reg(name string) (uint64, error) {
	switch name {
	case "rdi", "rsi", "rdx", "rcx", "r8", "r9":
		return e.regs[map[string]int{"rdi": 0, "rsi": 1, "rdx": 2, "rcx": 3, "r8": 4, "r9": 5}[name]], nil
	case "rax":
		return e.ret, nil
	case "rsp":
		return e.sp, nil
	}
	if i := regIndex(name); i >= 0 {
		return e.gp[i], nil
	}
	return 0, fmt.Errorf("%w: no register %q", probe.ErrFault, name)
}

var errFault = errors.New("EFAULT")

func (e *testEnv) Arg(n int) (uint64, error) {
	if n >= 1 && n <= len(e.regs) {
		return e.regs[n-1], nil
	}
	var b [8]byte
	if err := e.Read(e.sp+8*uint64(n-len(e.regs)), b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

func (e *testEnv) Builtin(b probe.Builtin) uint64 {
	switch b {
	case probe.BuiltinPID:
		return e.pid
	case probe.BuiltinTID:
		return e.tid
	}
	return e.ret
}

func (e *testEnv) Read(addr uint64, p []byte) error {
	if len(p) == 0 {
		return nil
	}
	if !e.a.ok(addr, len(p)) {
		if !e.a.inside(addr) && mapped(addr) {
			e.elsewhere = true
		}
		return errFault
	}
	copy(p, e.a.mem[addr-e.a.base:])
	return nil
}
