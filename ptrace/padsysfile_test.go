//go:build linux && amd64

package ptrace

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/utap/utap/elfsym"
	"github.com/utap/utap/probe"
)

// TestScanFileCache: a file's `syscall`s are scanned once; a copy of it,
// or the file changed, is scanned again, and finds the same.
func TestScanFileCache(t *testing.T) {
	sp, err := probe.Parse("libc:getppid")
	if err != nil {
		t.Fatal(err)
	}
	sites, err := elfsym.Resolve([]*probe.Spec{sp}, elfsym.Target{Exe: "/bin/ls"})
	if err != nil {
		t.Fatal(err)
	}
	libc := sites[0].Object
	a, err := scanFile(libc)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := scanFile(libc); b != a {
		t.Error("libc scanned twice")
	}
	n := 0
	for _, seg := range a.segs {
		n += len(seg.sites)
	}
	if n < 100 {
		t.Fatalf("%s: %d syscall instructions", libc, n)
	}
	data, err := os.ReadFile(libc)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "libc.so.6")
	if err := os.WriteFile(cp, data, 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := scanFile(cp)
	if err != nil {
		t.Fatal(err)
	}
	if c == a || len(c.segs) != len(a.segs) || len(c.segs[0].sites) != len(a.segs[0].sites) {
		t.Errorf("the copy: %d segments, the file's %d (or not scanned apart)", len(c.segs), len(a.segs))
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(cp, later, later); err != nil {
		t.Fatal(err)
	}
	if d, _ := scanFile(cp); d == c {
		t.Error("the copy changed, its scan kept")
	}
}
