//go:build linux && amd64

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/utap/utap/internal/agg"
	"github.com/utap/utap/probe"
)

// Aggregations (spec => count() by ustack, #24) are computed here, from
// the events of the specs that ask for one, on either engine; those
// events are not written. The maps print at exit, and with --interval
// every interval, as bpftrace prints its maps. Later an engine may
// aggregate where the probe fires and hand back agg.States to merge.
var intervalFlag = &cli.DurationFlag{Name: "interval", Usage: "print the aggregations (spec => count() ...) every `D` (e.g. 1s) with the time, as well as at exit"}

type aggregations struct {
	set        agg.Set
	specs      map[int]*aggSpec // by probe index
	order      []int            // the probe indexes of specs, in order
	keepStacks bool             // -k was asked: other events keep their stacks
	json       bool
	unreadable int // values whose read faulted, left out

	mu      sync.Mutex // comm, unreadable: events may come from several goroutines
	comm    map[int]string
	command string // the comm of run's one process, for when it has exited
	commKey bool   // some key is comm: note every pid's at its first event
}

// aggSpec is one aggregated spec and the map it feeds.
type aggSpec struct {
	spec *probe.Spec
	m    *agg.Map
	kind string // the events it takes: "entry" or "return"
}

// newAggregations finds the aggregated specs; nil when there are none.
func newAggregations(c *cli.Context, specs []*probe.Spec) (*aggregations, error) {
	a := &aggregations{specs: map[int]*aggSpec{}, comm: map[int]string{}, json: c.String("format") == "json"}
	for i, s := range specs {
		if s.Agg == nil {
			continue
		}
		name := s.Agg.Name
		if name == "" {
			name = defaultMapName(s.Text)
		}
		m, err := a.set.Map(name, s.Agg.Kind)
		if err != nil {
			return nil, fmt.Errorf("spec %q: %w", s.Text, err)
		}
		kind := s.Kind.String()
		if s.Syscall {
			kind = probe.Return.String()
		}
		for _, k := range s.Agg.Keys {
			a.commKey = a.commKey || k.Kind == probe.KeyComm
		}
		a.specs[i] = &aggSpec{spec: s, m: m, kind: kind}
		a.order = append(a.order, i)
	}
	if len(a.specs) == 0 {
		if c.IsSet("interval") {
			return nil, fmt.Errorf("--interval prints aggregations; give a spec one, e.g. -e 'libc:malloc => hist(arg1)'")
		}
		return nil, nil
	}
	switch {
	case c.Bool("c") || c.Bool("C") || c.Bool("count-only"):
		return nil, fmt.Errorf("-c, -C and --count-only summarize every spec; with an aggregation (=>) write the counts as one, e.g. -e 'libc:malloc => count()'")
	case c.Bool("ff"):
		return nil, fmt.Errorf("-ff writes events per process; aggregations (=>) print as one set of maps: key them by pid instead (=> count() by pid)")
	case c.String("format") != "text" && c.String("format") != "json":
		return nil, fmt.Errorf("--format %s: aggregations (=>) print as text or json", c.String("format"))
	case c.IsSet("interval") && c.Duration("interval") <= 0:
		return nil, fmt.Errorf("--interval %s: give a positive duration, e.g. 1s", c.Duration("interval"))
	}
	return a, nil
}

// defaultMapName names an unnamed map after its spec's text before "=>":
// @libc:malloc, or @"work if arg1 > 5" when it has blanks.
func defaultMapName(text string) string {
	if i := strings.LastIndex(text, "=>"); i >= 0 {
		text = text[:i]
	}
	text = strings.TrimSpace(text)
	if strings.ContainsAny(text, " \t") {
		return `@"` + text + `"`
	}
	return "@" + text
}

// notes says how bpftrace-shaped specs were read.
func (a *aggregations) notes(info func(string)) {
	if a == nil || info == nil {
		return
	}
	for _, i := range a.order {
		s := a.specs[i]
		if !s.spec.Agg.Bpftrace {
			continue
		}
		why := ""
		if s.spec.Agg.ShiftedArgs {
			why = " (bpftrace's arg0 is utap's arg1, its retval utap's ret)"
		}
		info(fmt.Sprintf("%q read as %q%s", s.spec.Text, s.spec.String(), why))
	}
}

// stackDepth is Target.StackDepth: a ustack key implies -k, with its
// frames (64 without a count) unless -k gave a depth.
func (a *aggregations) stackDepth(depth int) int {
	if a == nil {
		return depth
	}
	a.keepStacks = depth > 0
	if depth > 0 {
		return depth
	}
	for _, s := range a.specs {
		for _, k := range s.spec.Agg.Keys {
			if k.Kind == probe.KeyUstack {
				d := k.Depth
				if d == 0 {
					d = profileStackDepth
				}
				depth = max(depth, d)
			}
		}
	}
	return depth
}

// divert takes the events of aggregated specs into their maps and passes
// the others on (without the stacks only a ustack key asked for).
func (a *aggregations) divert(emit func(*probe.Event)) func(*probe.Event) {
	if a == nil {
		return emit
	}
	return probe.Unpaired(func(ev *probe.Event) {
		if a.commKey && ev.PID > 0 {
			a.commOf(ev.PID) // while it runs, whatever the event
		}
		s := a.specs[ev.ProbeIndex]
		if s == nil {
			if !a.keepStacks {
				ev.Stack = nil
			}
			emit(ev)
			return
		}
		switch ev.Kind {
		case "agg":
			a.merge(s, ev)
		case s.kind:
			a.add(s, ev)
		}
	})
}

func (a *aggregations) add(s *aggSpec, ev *probe.Event) {
	ag := s.spec.Agg
	var v int64
	if ag.Value >= 0 {
		if ag.Value >= len(ev.Args) || ev.Args[ag.Value].Err || ev.Args[ag.Value].IsStr {
			a.mu.Lock()
			a.unreadable++
			a.mu.Unlock()
			return
		}
		v = int64(ev.Args[ag.Value].Int)
	}
	key := make([]agg.Part, len(ag.Keys))
	for i, k := range ag.Keys {
		key[i] = a.part(k, ev)
	}
	a.set.Add(s.m, key, v)
}

// merge takes in a partial aggregate an engine computed where the probe
// fired (probe.Target.Aggregate).
func (a *aggregations) merge(s *aggSpec, ev *probe.Event) {
	d := ev.Agg
	if d == nil {
		return
	}
	if d.Unreadable > 0 {
		a.mu.Lock()
		a.unreadable += int(d.Unreadable)
		a.mu.Unlock()
	}
	if d.State.Count == 0 {
		return
	}
	ag := s.spec.Agg
	key := make([]agg.Part, len(ag.Keys))
	for i, k := range ag.Keys {
		var v probe.Value
		if i < len(d.Key) {
			v = d.Key[i]
		}
		switch k.Kind {
		case probe.KeyPID, probe.KeyTID:
			key[i] = intPart(int64(v.Int))
		case probe.KeyComm:
			if v.IsStr {
				key[i] = agg.Part{Text: v.Str}
			} else {
				key[i] = agg.Part{Text: a.commOf(int(v.Int))}
			}
		case probe.KeyFunc:
			key[i] = agg.Part{Text: v.Str}
			if v.Str == "" {
				key[i].Text = ev.Func
			}
		case probe.KeyUstack:
			key[i] = a.part(k, ev)
		default:
			key[i] = valuePart(v)
		}
	}
	a.set.Merge(s.m, key, d.State)
}

// part is one key's value for ev.
func (a *aggregations) part(k probe.AggKey, ev *probe.Event) agg.Part {
	switch k.Kind {
	case probe.KeyPID:
		return intPart(int64(ev.PID))
	case probe.KeyTID:
		return intPart(int64(ev.TID))
	case probe.KeyFunc:
		return agg.Part{Text: ev.Func}
	case probe.KeyComm:
		return agg.Part{Text: a.commOf(ev.PID)}
	case probe.KeyUstack:
		frames := ev.Stack
		if k.Depth > 0 && len(frames) > k.Depth {
			frames = frames[:k.Depth]
		}
		st := make([]string, 0, len(frames))
		for _, f := range frames {
			if f.Func == "" {
				st = append(st, "0x"+strconv.FormatUint(f.Addr, 16))
			} else {
				st = append(st, f.Func+"+"+strconv.FormatUint(f.Offset, 10))
			}
		}
		return agg.Part{Stack: st}
	}
	if k.Fetch >= len(ev.Args) {
		return agg.Part{Text: "?"}
	}
	return valuePart(ev.Args[k.Fetch])
}

// valuePart is an expression key's part, as its fetch shows it.
func valuePart(v probe.Value) agg.Part {
	switch {
	case v.Err:
		return agg.Part{Text: "?"}
	case v.Null:
		return agg.Part{Text: "NULL"}
	case v.IsStr:
		// A key outlives its event: its own copy, not the engine's
		// string, which may hold a buffer of many (ptrace/pads, str).
		return agg.Part{Text: strings.Clone(v.Str)}
	case v.Format == probe.FormatHex || v.Format == probe.FormatPointer:
		return agg.Part{Text: "0x" + strconv.FormatUint(v.Int, 16), Int: int64(v.Int), IsInt: true}
	case v.Signed || v.Format == probe.FormatDec:
		return intPart(int64(v.Int))
	}
	return agg.Part{Text: strconv.FormatUint(v.Int, 10), Int: int64(v.Int), IsInt: true}
}

func intPart(v int64) agg.Part {
	return agg.Part{Text: strconv.FormatInt(v, 10), Int: v, IsInt: true}
}

// runs notes the command run traces without -f: its one process's comm
// is known even once it has exited (the kernel's: the file's name, 15
// bytes at most).
func (a *aggregations) runs(argv0 string) {
	if a != nil {
		a.command = filepath.Base(argv0)[:min(len(filepath.Base(argv0)), 15)]
	}
}

// commOf is the process's name, read once per pid (the engines do not
// fetch it). A process that exited before its first event was written
// shows as run's command, or "?".
func (a *aggregations) commOf(pid int) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	name, ok := a.comm[pid]
	if !ok {
		name = "?"
		if a.command != "" {
			name = a.command
		}
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); err == nil {
			name = strings.TrimSuffix(string(b), "\n")
		}
		a.comm[pid] = name
	}
	return name
}

// write prints every map.
func (a *aggregations) write(out io.Writer) error {
	if a == nil {
		return nil
	}
	if a.json {
		return a.set.WriteJSON(out)
	}
	return a.set.WriteText(out)
}

// every prints the maps every d with bpftrace's time header until the
// returned stop is called.
func (a *aggregations) every(d time.Duration, out io.Writer) (stop func()) {
	if a == nil || d <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(d)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				io.WriteString(out, agg.TimeHeader(now, a.json))
				a.write(out)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// leftOut says how many values could not be read (a faulting read).
func (a *aggregations) leftOut() string {
	if a == nil || a.unreadable == 0 {
		return ""
	}
	return fmt.Sprintf("%d aggregated values were unreadable (a faulting read) and left out", a.unreadable)
}
