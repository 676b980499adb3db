//go:build linux && amd64

package uprobe

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/utap/utap/probe"
)

// testProgram runs expressions compiled by this engine's code generator,
// in the kernel through BPF_PROG_TEST_RUN, for differential tests against
// probe.Eval and the ptrace engine's bytecode.
//
// It is a BPF_PROG_TYPE_SYSCALL program (5.14+): its context is a
// caller-supplied buffer, here a struct pt_regs followed by one result
// slot per expression, and it runs in the calling thread. So memory reads
// read the calling process's memory: pass addresses of memory the test
// owns (mmap PROT_NONE pages for faults), and pid and tid are those of the
// calling thread (lock it with runtime.LockOSThread and read unix.Gettid).
type testProgram struct {
	prog  *ebpf.Program
	exprs []probe.Expr
	abi   probe.ABI
}

// Layout of a test program's context.
const (
	testSlotSize = 8 + strBufSize
)

// compileForTest compiles exprs as one program for the given ABI; kind
// Return makes ret (rax) available.
func compileForTest(exprs []probe.Expr, abi probe.ABI, kind probe.Kind) (*testProgram, error) {
	g := newExprGen(&code{}, abi, kind, haveV4(), kernelReads())
	g.emit(asm.Mov.Reg(asm.R6, asm.R1))
	for i, e := range exprs {
		out := int16(ptRegsSize + i*testSlotSize)
		g.emit(storeImm64(asm.RFP, slotFault, 0))
		s, isStr := e.(*probe.StrOf)
		if !isStr && e.Type().Str {
			return nil, fmt.Errorf("expression %d (%s): %w: string expression other than str()", i, e, ErrUnsupported)
		}
		addr := e
		if isStr {
			addr = s.Addr
		}
		if err := g.expr(addr); err != nil {
			return nil, fmt.Errorf("expression %d (%s): %w", i, e, err)
		}
		if !isStr {
			g.emit(
				asm.StoreMem(asm.R6, out, asm.R0, asm.DWord),
				asm.LoadMem(asm.R1, asm.RFP, slotFault, asm.DWord),
				asm.StoreMem(asm.R6, out+8, asm.R1, asm.DWord),
			)
			continue
		}
		// The string goes through the stack: helpers may not write to a
		// context pointer moved off its start.
		skip := g.label()
		g.emit(
			storeImm64(asm.R6, out, -14), // -EFAULT
			asm.LoadMem(asm.R1, asm.RFP, slotFault, asm.DWord),
			asm.JNE.Imm(asm.R1, 0, skip),
		)
		g.mem.readStrInto(asm.RFP, slotStrBuf, probe.MaxStrLen+1)
		g.emit(asm.StoreMem(asm.R6, out, asm.R0, asm.DWord))
		for o := 0; o < strBufSize; o += 8 {
			g.emit(
				asm.LoadMem(asm.R1, asm.RFP, int16(slotStrBuf+o), asm.DWord),
				asm.StoreMem(asm.R6, out+8+int16(o), asm.R1, asm.DWord),
			)
		}
		g.mark(skip)
	}
	g.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name: "utap_test", Type: ebpf.Syscall, License: "GPL", Flags: g.mem.rd.withSleep().progFlags(), Instructions: g.insns,
	})
	if err != nil {
		return nil, fmt.Errorf("uprobe: loading the test program: %w", verifierReason(err))
	}
	return &testProgram{prog: prog, exprs: exprs, abi: abi}, nil
}

// Run evaluates the expressions with the given integer arguments (in
// registers, then on a stack it builds) and return value, as
// probe.FetchValue would: a faulting read gives Value{Err: true}.
func (p *testProgram) Run(args []uint64, ret uint64) ([]probe.Value, error) {
	ctx := make([]byte, ptRegsSize+len(p.exprs)*testSlotSize)
	le := binary.LittleEndian
	regs := argRegs[p.abi]
	// The stack as at a call: the return address, then the stack arguments.
	stack := make([]uint64, 1+max(0, len(args)-len(regs)))
	for i, a := range args {
		if i < len(regs) {
			le.PutUint64(ctx[regs[i]:], a)
		} else {
			stack[1+i-len(regs)] = a
		}
	}
	le.PutUint64(ctx[regAX:], ret)
	if p.abi == probe.ABIGoRegs && len(args) > 0 {
		le.PutUint64(ctx[regAX:], args[0]) // rax is both arg1 and ret
	}
	var pin runtime.Pinner
	pin.Pin(&stack[0])
	defer pin.Unpin()
	le.PutUint64(ctx[regSP:], uint64(uintptr(unsafe.Pointer(&stack[0]))))
	if _, err := p.prog.Run(&ebpf.RunOptions{Context: ctx, ContextOut: ctx}); err != nil {
		return nil, fmt.Errorf("uprobe: running the test program: %w", err)
	}
	vals := make([]probe.Value, len(p.exprs))
	for i, e := range p.exprs {
		slot := ctx[ptRegsSize+i*testSlotSize:]
		v := &vals[i]
		if _, ok := e.(*probe.StrOf); ok {
			n := int64(le.Uint64(slot))
			if n <= 0 {
				v.Err = true
				continue
			}
			b := slot[8 : 8+min(n, probe.MaxStrLen+1)]
			if j := bytes.IndexByte(b, 0); j >= 0 {
				b = b[:j]
			}
			v.IsStr, v.Str = true, string(b)
			continue
		}
		if le.Uint64(slot[8:]) != 0 {
			v.Err = true
			continue
		}
		v.Int, v.Signed = le.Uint64(slot), e.Type().Signed
	}
	return vals, nil
}

// Close unloads the program.
func (p *testProgram) Close() error { return p.prog.Close() }
