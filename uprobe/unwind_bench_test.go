//go:build linux && amd64

package uprobe

import (
	"encoding/binary"
	"os/exec"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
)

// BenchmarkUnwindDwarf is the user-space side of -k's dwarf mode: the
// DWARF CFI walk of one record's copied registers and stack (the kernel's
// side, the copy, is per event in the ring; see docs/benchmarks.md). The
// record is taken from a fixture built without frame pointers, stopped in
// nanosleep under main. BenchmarkUnwindFP decodes the kernel's
// frame-pointer walk from the same area's size, for comparison.
func BenchmarkUnwindDwarf(b *testing.B) {
	pid, area := stoppedStack(b)
	var d stackDecoder
	sc := stackConf{depth: 64}
	if n := len(d.frames(area, pid, sc)); n < 3 {
		b.Fatalf("%d frames", n)
	}
	b.ResetTimer()
	for range b.N {
		d.frames(area, pid, sc)
	}
}

func BenchmarkUnwindFP(b *testing.B) {
	sc := stackConf{depth: 64, fp: true}
	area := make([]byte, sc.areaSize())
	binary.LittleEndian.PutUint64(area, 8*8)
	for i := range 8 {
		binary.LittleEndian.PutUint64(area[8+8*i:], 0x401000+uint64(i))
	}
	var d stackDecoder
	b.ResetTimer()
	for range b.N {
		d.frames(area, 1, sc)
	}
}

// stoppedStack starts stack_chain (no frame pointers) sleeping, stops it
// with ptrace in its nanosleep and builds a dwarf stack area of it, as
// the kernel's copy would.
func stoppedStack(b *testing.B) (int, []byte) {
	need.Root(b)
	bin := fixture.C(b, "stack_chain.c", "-O2", "-g", "-fomit-frame-pointer")
	cmd := exec.Command(bin, "1", "5000")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pid := cmd.Process.Pid
	time.Sleep(100 * time.Millisecond) // setup only: let it reach nanosleep
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.PtraceSeize(pid); err != nil {
		b.Fatal(err)
	}
	defer unix.PtraceDetach(pid)
	if err := unix.PtraceInterrupt(pid); err != nil {
		b.Fatal(err)
	}
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, unix.WALL, nil); err != nil {
		b.Fatal(err)
	}
	var regs unix.PtraceRegs
	if err := unix.PtraceGetRegs(pid, &regs); err != nil {
		b.Fatal(err)
	}
	area := make([]byte, stkAreaDW)
	copy(area[stkOffRegs:], unsafe.Slice((*byte)(unsafe.Pointer(&regs)), ptRegsSize))
	// As the kernel copies: the rest of sp's page, then whole pages.
	n, size := 0, 4096-int(regs.Rsp&4095)
	for n+size <= stkDataSize {
		data := area[stkOffData+n : stkOffData+n+size]
		if _, err := unix.ProcessVMReadv(pid, []unix.Iovec{{Base: &data[0], Len: uint64(size)}},
			[]unix.RemoteIovec{{Base: uintptr(regs.Rsp) + uintptr(n), Len: size}}, 0); err != nil {
			break
		}
		n, size = n+size, 4096
	}
	binary.LittleEndian.PutUint64(area, uint64(n))
	return pid, area
}
