//go:build linux && amd64

package elfsym

import (
	"os"
	"runtime"
	"testing"

	"github.com/utap/utap/probe"
)

// callers returns this process's own stack as -k frames.
func callers() []probe.Frame {
	pcs := make([]uintptr, 16)
	n := runtime.Callers(1, pcs)
	fs := make([]probe.Frame, n)
	for i := range n {
		fs[i].Addr = uint64(pcs[i])
	}
	return fs
}

func TestSymbolizeSelf(t *testing.T) {
	var s Symbolizer
	fs := callers()
	s.Symbolize(os.Getpid(), fs)
	if fs[0].Func != "github.com/utap/utap/elfsym.callers" || fs[0].Object == "" {
		t.Errorf("first frame %+v, want callers", fs[0])
	}
	// go test links without DWARF: no lines here (the enginetest
	// fixtures check them).
	if fs[1].Func != "github.com/utap/utap/elfsym.TestSymbolizeSelf" || fs[1].Offset == 0 {
		t.Errorf("second frame %+v, want this test", fs[1])
	}
}

// BenchmarkSymbolize is the CLI's cost per event of naming a -k stack,
// objects and maps cached (the lead measures; not run by the suite).
func BenchmarkSymbolize(b *testing.B) {
	var s Symbolizer
	fs := callers()
	pid := os.Getpid()
	s.Symbolize(pid, fs)
	b.ResetTimer()
	for range b.N {
		for i := range fs {
			fs[i] = probe.Frame{Addr: fs[i].Addr}
		}
		s.Symbolize(pid, fs)
	}
}
