//go:build linux && amd64

package enginetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/utap/utap/elfsym"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
	"github.com/utap/utap/ptrace"
	"github.com/utap/utap/uprobe"
)

// engines are the backends every behaviour runs on.
func engines() []probe.Engine {
	return []probe.Engine{&ptrace.Engine{}, &uprobe.Engine{}}
}

// needEngine skips (or fails under CI) when the machine cannot run eng.
func needEngine(t *testing.T, eng probe.Engine) {
	t.Helper()
	if eng.Name() == "uprobe" {
		need.Uprobes(t)
		return
	}
	need.Root(t) // attach rows seize processes that are not our children
}

// outcome is what one traced run produced.
type outcome struct {
	engine string
	events []probe.Event
	stdout string
	stderr string
	res    probe.Result
}

// collector keeps a copy of every emitted event; engines reuse theirs.
type collector struct {
	mu  sync.Mutex
	evs []probe.Event
}

func (c *collector) emit(ev *probe.Event) {
	e := *ev
	e.Args = append([]probe.Value(nil), ev.Args...)
	if ev.Ret != nil {
		r := *ev.Ret
		e.Ret = &r
	}
	c.mu.Lock()
	c.evs = append(c.evs, e)
	c.mu.Unlock()
}

func (c *collector) snapshot() []probe.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]probe.Event(nil), c.evs...)
}

// parseSpecs parses every spec text.
func parseSpecs(texts []string) ([]*probe.Spec, error) {
	var specs []*probe.Spec
	for _, text := range texts {
		s, err := probe.Parse(text)
		if err != nil {
			return nil, err
		}
		specs = append(specs, s)
	}
	return specs, nil
}

// resolver re-resolves specs against a process image, as the CLI does.
func resolver(specs []*probe.Spec) func(pid int) ([]probe.Site, error) {
	return func(pid int) ([]probe.Site, error) {
		return elfsym.Resolve(specs, elfsym.Target{PID: pid})
	}
}

// traceRun runs argv under eng with texts as probes, the way `utap run`
// does. The error is the pipeline's first failure (parse, resolve, trace).
func traceRun(eng probe.Engine, texts []string, argv []string, follow bool) (*outcome, error) {
	specs, err := parseSpecs(texts)
	if err != nil {
		return nil, err
	}
	sites, err := elfsym.Resolve(specs, elfsym.Target{Exe: argv[0]})
	if err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	tgt := probe.Target{
		Argv: argv, Stdout: &stdout, Stderr: &stderr, Follow: follow,
		Resolve: resolver(specs),
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := &collector{}
	res, err := eng.Trace(ctx, tgt, sites, c.emit)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%v still running after a minute", argv)
	}
	return &outcome{engine: eng.Name(), events: c.snapshot(), stdout: stdout.String(), stderr: stderr.String(), res: res}, nil
}

// untraced runs argv without any tracer: the reference output and exit
// status a traced run must reproduce. Results are cached per argv.
func untraced(t *testing.T, argv []string) (stdout string, code int) {
	t.Helper()
	key := strings.Join(argv, "\x00")
	untracedMu.Lock()
	defer untracedMu.Unlock()
	if r, ok := untracedRuns[key]; ok {
		return r.stdout, r.code
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = exitCode(ee.ProcessState)
	case err != nil:
		t.Fatal(err)
	}
	untracedRuns[key] = untracedRun{out.String(), code}
	return out.String(), code
}

type untracedRun struct {
	stdout string
	code   int
}

var (
	untracedMu   sync.Mutex
	untracedRuns = map[string]untracedRun{}
)

// exitCode is the shell's view of a status: 128+sig when killed.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// line renders an event the way the checks state expectations:
// func(arg, ...) for entries, func(arg, ...) = ret for returns.
func line(ev probe.Event) string {
	var b strings.Builder
	b.WriteString(ev.Func)
	b.WriteByte('(')
	for i, a := range ev.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(value(a))
	}
	b.WriteByte(')')
	if ev.Kind == "return" {
		b.WriteString(" = ")
		if ev.Ret == nil {
			b.WriteString("<nil>")
		} else {
			b.WriteString(value(*ev.Ret))
		}
	}
	return b.String()
}

func value(v probe.Value) string {
	switch {
	case v.Err:
		return "?"
	case v.IsStr:
		return strconv.Quote(v.Str)
	case v.Signed:
		return strconv.FormatInt(int64(v.Int), 10)
	}
	return strconv.FormatUint(v.Int, 10)
}

// bugNoDuration skips rows and cases whose return events all lack a
// duration, an engine bug the report lists.
func bugNoDuration(engine string) string {
	return "BUG(" + engine + "): return events carry no duration (duration_ns 0) — see report"
}

func lines(evs []probe.Event) []string {
	out := make([]string, 0, len(evs))
	for _, ev := range evs {
		out = append(out, line(ev))
	}
	return out
}
