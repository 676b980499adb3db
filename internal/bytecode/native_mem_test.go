//go:build linux && amd64

package bytecode

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/utap/utap/probe"
)

// TestNativeReads checks every load and str() comparison natively against
// the interpreter at the arena's edges: strings, pointers, the bytes
// before and across its PROT_NONE guard page, NULL, unmapped addresses.
func TestNativeReads(t *testing.T) {
	a := testArena(t)
	addrs := append([]uint64{0, 8, a.guard - 8, a.guard - 3, a.guard - 1, a.guard, a.base, a.base + pageSize - 1,
		a.base + arenaPages*pageSize - 1, 1 << 63, ^uint64(0) - 2}, a.sites...)
	addrs = append(addrs, a.ptrs...)
	types := []probe.Type{probe.U8, probe.S8, probe.U16, probe.S16, probe.U32, probe.S32, probe.U64, probe.S64}
	var exprs []probe.Expr
	for _, ty := range types {
		exprs = append(exprs, &probe.Deref{T: ty, Addr: &probe.Arg{N: 1}})
	}
	// A pointer followed: **(u64 **)arg1 + 2.
	exprs = append(exprs, &probe.Deref{T: probe.U16, Addr: &probe.Binary{Op: probe.OpAdd,
		X: &probe.Deref{T: probe.U64, Addr: &probe.Arg{N: 1}}, Y: &probe.Const{Val: 2, T: probe.U64}, T: probe.U64}})
	lits := append([]string{"hello w", "/etc/passw", "aaaaaaaa"}, strPool...)
	for _, l := range lits {
		if len(l) > maxNativeLit {
			continue
		}
		for _, op := range []probe.Op{probe.OpEq, probe.OpNe} {
			exprs = append(exprs, &probe.Binary{Op: op, X: &probe.StrOf{Addr: &probe.Arg{N: 1}}, Y: &probe.StrLit{Val: l}, T: probe.S64})
		}
	}
	faults, trues := 0, 0
	for _, e := range exprs {
		p, err := CompileFetch(probe.Fetch{Expr: e})
		if err != nil {
			t.Fatal(err)
		}
		c, err := CompileCond(e)
		if err != nil {
			t.Fatal(err)
		}
		fp, err := compileNative(t, p, probe.ABISysV, 0)
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		fc, err := compileNative(t, c, probe.ABISysV, 0)
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		for _, addr := range addrs {
			frame := make([]uint64, NativeVRegBase)
			frame[7] = addr
			env := &frameEnv{frame: frame, abi: probe.ABISysV}
			want := p.Fetch(env.args(), env)
			got, faulted := runNativeF(t, fp, p, frame)
			if want.Err != faulted || !want.Err && p.Value(got) != want {
				t.Fatalf("%s at %#x: native %#x (fault %v), interpreter %+v\n%s", e, addr, got, faulted, want, p)
			}
			v, faulted := runNativeF(t, fc, c, frame)
			if got, want := v != 0 && !faulted, c.Cond(env.args(), env); got != want {
				t.Fatalf("condition %s at %#x: native %v, interpreter %v\n%s", e, addr, got, want, c)
			}
			if faulted {
				faults++
			} else if v != 0 {
				trues++
			}
		}
		fp.Close()
		fc.Close()
	}
	if faults == 0 || trues == 0 {
		t.Fatalf("%d faults, %d true conditions: the edges were not reached", faults, trues)
	}
}

// TestNativeReadsDirect: with the tracer's liveness word set, reads are
// plain loads (directRead): the same values as the interpreter's at every
// address it reads whole (a faulting load here would be this process's
// own SIGSEGV: the pads' tracer catches those, tested on real tracees),
// with and without alignment, for strings of every length in the pool.
func TestNativeReadsDirect(t *testing.T) {
	a := testArena(t)
	alive := new(uint64)
	*alive = 1234 // a thread id: nonzero in FUTEX_TID_MASK
	var addrs []uint64
	for _, s := range a.sites {
		for off := range uint64(9) {
			addrs = append(addrs, s+off)
		}
	}
	addrs = append(addrs, a.ptrs...)
	// Never mapped: read as faults without a load.
	addrs = append(addrs, 0, 8, 4096, 1<<47, 1<<63, ^uint64(0)-2)
	var exprs []probe.Expr
	for _, ty := range []probe.Type{probe.U8, probe.S16, probe.U32, probe.S64} {
		exprs = append(exprs, &probe.Deref{T: ty, Addr: &probe.Arg{N: 1}})
	}
	for _, l := range append([]string{"hello w", "aaaaaaaa"}, strPool...) {
		if len(l) <= maxNativeLit {
			exprs = append(exprs, &probe.Binary{Op: probe.OpEq, X: &probe.StrOf{Addr: &probe.Arg{N: 1}}, Y: &probe.StrLit{Val: l}, T: probe.S64})
		}
	}
	checked := 0
	for _, e := range exprs {
		p, err := CompileFetch(probe.Fetch{Expr: e})
		if err != nil {
			t.Fatal(err)
		}
		fp, err := compileNative(t, p, probe.ABISysV, 0)
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		for _, addr := range addrs {
			frame := make([]uint64, NativeVRegBase)
			frame[7] = addr
			env := &frameEnv{frame: frame, abi: probe.ABISysV}
			want := p.Fetch(env.args(), env)
			if want.Err && !neverMapped(addr) {
				continue // a load would fault here
			}
			frame[NativeAliveSlot] = uint64(uintptr(unsafe.Pointer(alive)))
			got, faulted := runNativeF(t, fp, p, frame)
			if faulted != want.Err || !faulted && p.Value(got) != want {
				t.Fatalf("%s at %#x: direct %#x (fault %v), interpreter %+v", e, addr, got, faulted, want)
			}
			checked++
		}
		fp.Close()
	}
	runtime.KeepAlive(alive)
	if checked == 0 {
		t.Fatal("nothing checked")
	}
}

// neverMapped: below mmap_min_addr or past the user half.
func neverMapped(addr uint64) bool { return addr < lowestMapped || addr >= 1<<47 }
