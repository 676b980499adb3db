//go:build linux && amd64

package bytecode

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/utap/utap/probe"
)

// benchNative runs cond's native code on a frame whose arguments point
// into the arena: a pad's cost for it, two system calls (getpid once per
// hit, process_vm_readv per read) against ≈13 µs for a breakpoint's stop
// (plus the tracer's same reads). Not run by the tests.
func benchNative(b *testing.B, cond string) { benchNativeAlive(b, cond, nil) }

// benchNativeAlive is benchNative with the tracer's liveness word at
// alive: the reads are plain loads (the tracer alive), none faulting.
func benchNativeAlive(b *testing.B, cond string, alive *uint64) {
	a := testArena(b)
	c, err := CompileCond(parseCond(b, cond))
	if err != nil {
		b.Fatal(err)
	}
	f, err := compileNative(b, c, probe.ABISysV, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	frame := make([]uint64, NativeVRegBase+c.FrameWords())
	frame[7], frame[6], frame[2], frame[1] = 5, 7, a.sites[3], a.ptrs[0]
	if alive != nil {
		frame[NativeAliveSlot] = uint64(uintptr(unsafe.Pointer(alive)))
	}
	b.ReportAllocs()
	for b.Loop() {
		frame[NativePidSlot] = 0
		f.Call(frame)
	}
	runtime.KeepAlive(alive)
}

func BenchmarkNativeDeref(b *testing.B) {
	benchNative(b, "*(u64*)arg4 != 0 && *(u8*)(arg3 + 1) == 'e'")
}

func BenchmarkNativeStr(b *testing.B) { benchNative(b, `str(arg3) == "/etc/passwd"`) }

// The same reads while the tracer lives: loads in the exception table.
var tracerAlive = uint64(1234)

func BenchmarkNativeDerefLoads(b *testing.B) {
	benchNativeAlive(b, "*(u64*)arg4 != 0 && *(u8*)(arg3 + 1) == 'e'", &tracerAlive)
}

func BenchmarkNativeStrLoads(b *testing.B) {
	benchNativeAlive(b, `str(arg3) == "/etc/passwd"`, &tracerAlive)
}
