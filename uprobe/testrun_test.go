//go:build linux && amd64

package uprobe

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"unsafe"

	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
	"golang.org/x/sys/unix"
)

// selfEnv is a probe.Env over this process: args, and memory read through
// /proc/self/mem. That reads PROT_NONE pages too (FOLL_FORCE), where the
// kernel's reads fault: holes must be unmapped.
type selfEnv struct {
	args     []uint64
	pid, tid uint64
	mem      *os.File
}

func (e selfEnv) Arg(n int) (uint64, error) { return e.args[n-1], nil }
func (e selfEnv) Builtin(b probe.Builtin) uint64 {
	if b == probe.BuiltinPID {
		return e.pid
	}
	return e.tid
}
func (e selfEnv) Reg(name string) (uint64, error) {
	return 0, fmt.Errorf("%w: no register %q", probe.ErrFault, name)
}
func (e selfEnv) Read(addr uint64, p []byte) error {
	_, err := e.mem.ReadAt(p, int64(addr))
	return err
}

// TestProgramStrings runs string reads and comparisons of strings that
// end right before an unreadable page, through compileForTest, against
// probe.Eval.
func TestProgramStrings(t *testing.T) {
	need.Root(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	pages, err := unix.Mmap(-1, 0, 2*pageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.MunmapPtr(unsafe.Pointer(&pages[0]), pageSize)
	if err := unix.MunmapPtr(unsafe.Pointer(&pages[pageSize]), pageSize); err != nil {
		t.Fatal(err)
	}
	pages = pages[:pageSize]
	end := uint64(uintptr(unsafe.Pointer(&pages[0]))) + pageSize
	s1, s2 := &probe.StrOf{Addr: arg(1)}, &probe.StrOf{Addr: arg(2)}
	var exprs []probe.Expr
	for _, lit := range []string{"", "a", "ab", "abc", "abcd"} {
		exprs = append(exprs, &probe.Binary{Op: probe.OpEq, T: probe.S64, X: s1, Y: &probe.StrLit{Val: lit}})
	}
	exprs = append(exprs, s1, &probe.Binary{Op: probe.OpNe, T: probe.S64, X: s1, Y: s2})
	p, err := compileForTest(exprs, probe.ABISysV, probe.Entry)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	env := selfEnv{pid: uint64(unix.Getpid()), tid: uint64(unix.Gettid()), mem: mem}
	n := 0
	for _, tail := range []string{"ab\x00", "abc", "ab", "a\x00", "", "abcd"} {
		copy(pages[pageSize-len(tail):], tail)
		for _, other := range []string{"ab\x00", "abc"} {
			copy(pages[:], other)
			env.args = []uint64{end - uint64(len(tail)), uint64(uintptr(unsafe.Pointer(&pages[0])))}
			got, err := p.Run(env.args, 0)
			if err != nil {
				t.Fatal(err)
			}
			for i, e := range exprs {
				want := probe.FetchValue(probe.Fetch{Expr: e}, env)
				if got[i] != want {
					t.Errorf("%q at the page end, arg2 %q: %s = %+v, want %+v", tail, other, e, got[i], want)
				}
				n++
			}
		}
	}
	t.Logf("%d values agree", n)
}
