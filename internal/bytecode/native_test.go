//go:build linux && amd64

package bytecode

import (
	"errors"
	"math/rand"
	"os"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/jit"
	"github.com/utap/utap/internal/x86"
	"github.com/utap/utap/probe"
)

// frameEnv is the hit a native frame describes, for the interpreter.
type frameEnv struct {
	frame []uint64
	abi   probe.ABI
	rip   uint64
}

func (e *frameEnv) args() []uint64 {
	var a []uint64
	for _, s := range nativeArgs[e.abi] {
		a = append(a, e.frame[s])
	}
	return a
}

func (e *frameEnv) Arg(n int) (uint64, error) {
	if a := e.args(); n >= 1 && n <= len(a) {
		return a[n-1], nil
	}
	return 0, ErrFault // a stack argument: Native refuses those
}

func (e *frameEnv) Builtin(b probe.Builtin) uint64 {
	if b == probe.BuiltinRet {
		return e.frame[0]
	}
	return 4242
}

func (e *frameEnv) Reg(name string) (uint64, error) {
	i := regIndex(name)
	switch {
	case i < 0:
		return 0, ErrFault
	case regSlots[i] < 0:
		return e.rip, nil
	}
	return e.frame[regSlots[i]], nil
}

// Read reads the test process's own memory as the native code does
// (process_vm_readv), so that both see the same faults.
func (e *frameEnv) Read(addr uint64, p []byte) error { return selfRead(addr, p) }

func selfRead(addr uint64, p []byte) error {
	if len(p) == 0 {
		return nil
	}
	n, err := unix.ProcessVMReadv(os.Getpid(), []unix.Iovec{{Base: &p[0], Len: uint64(len(p))}},
		[]unix.RemoteIovec{{Base: uintptr(addr), Len: len(p)}}, 0)
	if err != nil || n != len(p) {
		return ErrFault
	}
	return nil
}

// compileNative assembles p's native code with a RET and maps it; the
// caller closes it.
func compileNative(t testing.TB, p *Program, abi probe.ABI, rip uint64) (*jit.Func, error) {
	t.Helper()
	a := x86.NewAsm()
	if err := p.Native(a, abi, rip); err != nil {
		return nil, err
	}
	if p.Reads() {
		a.Store(x86.Mem{Base: x86.RBX, Disp: 8 * faultSlot}, x86.RDX)
	}
	a.Raw(0xc3)
	code, err := a.Assemble()
	if err != nil {
		t.Fatalf("assemble %s: %v", p, err)
	}
	f, err := jit.New(code)
	if err != nil {
		t.Fatal(err)
	}
	return f, nil
}

// faultSlot is where compileNative's code stores a reading program's
// fault flag (RDX), a frame slot no program writes.
const faultSlot = NativePidSlot + 1

// runNative runs f on a copy of frame, extended with garbage virtual
// registers and scratch, and checks that the hardware slots and the
// callee-saved registers stay as they were. It returns RAX.
func runNative(t testing.TB, f *jit.Func, p *Program, frame []uint64) uint64 {
	t.Helper()
	v, _ := runNativeF(t, f, p, frame)
	return v
}

// runNativeF is runNative also saying whether a read faulted (RDX 1).
func runNativeF(t testing.TB, f *jit.Func, p *Program, frame []uint64) (uint64, bool) {
	t.Helper()
	faulted := false
	fr := append(slices.Clone(frame[:NativeVRegBase]), make([]uint64, p.FrameWords())...)
	for i := NativeVRegBase; i < len(fr); i++ {
		fr[i] = 0xdead0000 + uint64(i)
	}
	if p.Reads() {
		fr[NativePidSlot], fr[faultSlot] = 0, 7
	}
	v, saved := f.Call(fr)
	if !saved {
		t.Fatalf("%s: the code lost a callee-saved register", p)
	}
	if p.Reads() {
		if pid := fr[NativePidSlot]; pid != 0 && pid != uint64(os.Getpid()) {
			t.Fatalf("%s: pid cache %d", p, fr[NativePidSlot])
		}
		switch fr[faultSlot] {
		case 1:
			if v != 0 {
				t.Fatalf("%s: a fault with RAX %#x", p, v)
			}
			faulted = true
		case 0:
		default:
			t.Fatalf("%s: RDX %#x after the code", p, fr[faultSlot])
		}
		fr[NativePidSlot], fr[faultSlot] = frame[NativePidSlot], frame[faultSlot]
	}
	if !slices.Equal(fr[:NativeVRegBase], frame[:NativeVRegBase]) {
		t.Fatalf("%s: the code wrote the register slots", p)
	}
	return v, faulted
}

// noMem rewrites e without memory or string reads, so that Native takes
// most of what the generator makes: a read becomes a cast of its address.
func noMem(e probe.Expr) probe.Expr {
	switch n := e.(type) {
	case *probe.Deref:
		return &probe.Cast{To: n.T, X: noMem(n.Addr)}
	case *probe.Unary:
		return &probe.Unary{Op: n.Op, X: noMem(n.X)}
	case *probe.Cast:
		return &probe.Cast{To: n.To, X: noMem(n.X)}
	case *probe.Ternary:
		return &probe.Ternary{Cond: noMem(n.Cond), Then: noMem(n.Then), Else: noMem(n.Else), T: n.T}
	case *probe.Binary:
		if n.X.Type().Str || n.Y.Type().Str {
			return &probe.Arg{N: 2}
		}
		return &probe.Binary{Op: n.Op, X: noMem(n.X), Y: noMem(n.Y), T: n.T}
	}
	return e
}

// TestNativeDifferential runs random programs natively and in the
// interpreter on random frames, as fetches and as conditions.
func TestNativeDifferential(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	ran, reads := 0, 0
	for seed := range int64(n) {
		g := &gen{r: rand.New(rand.NewSource(seed)), a: testArena(t), regs: true}
		e := g.expr(2 + int(seed%7))
		if seed%4 != 0 {
			e = noMem(e)
		}
		abi := probe.ABI(seed % 2)
		rip := g.value()
		p, err := CompileFetch(probe.Fetch{Expr: e, Format: probe.FormatHex})
		if err != nil {
			t.Fatalf("compile %s: %v", e, err)
		}
		c, err := CompileCond(e)
		if err != nil {
			t.Fatalf("compile condition %s: %v", e, err)
		}
		fp, err := compileNative(t, p, abi, rip)
		if err != nil {
			if !errors.Is(err, ErrNotNative) {
				t.Fatalf("%s: %v", e, err)
			}
			continue
		}
		fc, err := compileNative(t, c, abi, rip)
		if err != nil {
			t.Fatalf("condition %s: %v, its fetch compiled", e, err)
		}
		ran++
		if p.Reads() {
			reads++
		}
		nativeFrames(t, g, e, p, c, fp, fc, abi, rip)
		fp.Close()
		fc.Close()
	}
	t.Logf("%d of %d programs ran natively, %d reading memory", ran, n, reads)
	if reads < n/20 {
		t.Fatalf("only %d programs read memory", reads)
	}
	if ran < n/2 {
		t.Fatalf("only %d of %d programs ran natively", ran, n)
	}
}

// nativeFrames checks fetch p and condition c of e at random frames.
func nativeFrames(t *testing.T, g *gen, e probe.Expr, p, c *Program, fp, fc *jit.Func, abi probe.ABI, rip uint64) {
	t.Helper()
	for range 8 {
		frame := make([]uint64, NativeVRegBase)
		for i := range 17 {
			switch g.r.Intn(4) {
			case 0: // memory reads find strings and pointers
				frame[i] = g.a.sites[g.r.Intn(len(g.a.sites))]
			case 1:
				frame[i] = g.a.ptrs[g.r.Intn(len(g.a.ptrs))]
			default:
				frame[i] = g.value()
			}
		}
		env := &frameEnv{frame: frame, abi: abi, rip: rip}
		want := p.Fetch(env.args(), env)
		got, faulted := runNativeF(t, fp, p, frame)
		if want.Err != faulted || !want.Err && p.Value(got) != want {
			t.Fatalf("%s (ABI %d, rip %#x)\nframe %#x\nnative %#x, interpreter %+v\n%s", e, abi, rip, frame, got, want, p)
		}
		v, faulted := runNativeF(t, fc, c, frame)
		if got, want := v != 0 && !faulted, c.Cond(env.args(), env); got != want {
			t.Fatalf("condition %s\nframe %#x\nnative %v, interpreter %v\n%s", e, frame, got, want, c)
		}
	}
}
