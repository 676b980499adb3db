//go:build linux && amd64

package uprobe

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/probe"
)

// funcSite resolves sym in bin with debug/elf (elfsym stands in for this
// in the real pipeline) and binds spec to it, at byte offset off.
func funcSite(t testing.TB, bin, sym string, off uint64, spec *probe.Spec) probe.Site {
	t.Helper()
	s, fileOff := fixture.Func(t, bin, sym)
	site := probe.Site{
		Spec: spec, Object: bin, Func: sym, FuncAddr: s.Value, FuncSize: s.Size,
		Addr: s.Value + off, FileOffset: fileOff + off,
		Fetches: spec.Fetches, Cond: spec.Cond,
	}
	var err error
	if site.Insn, err = readCode(bin, site.FileOffset, 15); err != nil {
		t.Fatal(err)
	}
	return site
}

// collector gathers emitted events.
type collector struct {
	mu  sync.Mutex
	evs []probe.Event
	n   int
}

func (c *collector) emit(ev *probe.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	if len(c.evs) < 10000 {
		e := *ev
		e.Args = append([]probe.Value(nil), ev.Args...)
		c.evs = append(c.evs, e)
	}
}

func run(t testing.TB, e *Engine, target probe.Target, sites []probe.Site) (*collector, probe.Result) {
	t.Helper()
	if target.Stdout == nil {
		target.Stdout = os.Stdout
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := &collector{}
	res, err := e.Trace(ctx, target, sites, c.emit)
	if err != nil {
		t.Fatal(err)
	}
	return c, res
}

func arg(n int) probe.Expr { return &probe.Arg{N: n} }

func fetches(exprs ...probe.Expr) []probe.Fetch {
	var fs []probe.Fetch
	for _, e := range exprs {
		fs = append(fs, probe.Fetch{Expr: e, Text: e.String()})
	}
	return fs
}

// startReady starts bin in a mode that prints "ready" and then runs until
// killed, which the test's cleanup does.
func startReady(t *testing.T, bin, mode string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, mode)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
		t.Fatalf("fixture said %q", line)
	}
	return cmd
}
