//go:build linux && amd64

package pad

import (
	"math/rand"
	"sync/atomic"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A trap pad's int3 is where its layout says, and the pad runs past it,
// every register and flag kept, while the liveness word says the tracer
// let go (0) or died (FUTEX_OWNER_DIED): its trap with a live tracer is
// the engine's to test (TestCLIPadsTracerKilled).
func TestPadCodeTrap(t *testing.T) {
	mem, err := unix.Mmap(-1, 0, Size(16), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(mem) })
	spec := Spec{
		ID: 3, Addr: 0x401000, Trap: true, Ring: uint64(uintptr(unsafe.Pointer(&mem[0]))), Records: 16,
		Displaced: func(uint64) ([]byte, error) { return []byte{0xc3}, nil },
	}
	code, lay, err := Build(spec, 0x10000)
	if err != nil {
		t.Fatal(err)
	}
	if lay.Trap <= lay.Saved || lay.Trap >= lay.Displaced || code[lay.Trap] != 0xcc {
		t.Fatalf("layout %+v: no int3 at Trap in % x", lay, code)
	}
	f := jitFunc(t, code)
	word := (*uint32)(unsafe.Pointer(&mem[OffTracer]))
	rnd := rand.New(rand.NewSource(4))
	for _, w := range []uint32{0, futexOwnerDied, futexOwnerDied | 1234} {
		atomic.StoreUint32(word, w)
		call(t, f, rnd, 1, 2)
	}
	for _, bad := range []func(*Spec){
		func(s *Spec) { s.Count = true },
		func(s *Spec) { s.Fetches = spec.Fetches[:0:0]; s.SyncPoint = true },
	} {
		s := spec
		bad(&s)
		if err := Check(s); err == nil {
			t.Errorf("%+v: a trap pad that does more was accepted", s)
		}
	}
}
