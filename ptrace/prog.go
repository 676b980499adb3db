//go:build linux && amd64

package ptrace

import (
	"errors"
	"fmt"
	"math"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/bytecode"
	"github.com/utap/utap/probe"
)

// events is the output of the loop: the events of one stop, queued until
// its thread runs on, then emitted in order with the pads' records.
type events struct {
	tr      *tracer
	emit    func(*probe.Event)
	env     hitEnv         // reused at every hit
	pending []*probe.Event // reported, emitted once the thread runs on
}

// siteProg is a site with its condition and fetches compiled once, when
// its breakpoint goes in. The programs carry their own scratch state: they
// are evaluated only on the tracer's goroutine.
type siteProg struct {
	site    *probe.Site
	cond    *bytecode.Program // nil: no condition
	fetches []*bytecode.Program
	ref     bool // an expression bytecode cannot compile: use the reference evaluator
}

func compileSite(s *probe.Site) (*siteProg, error) {
	sp := &siteProg{site: s}
	var err error
	if s.Cond != nil {
		sp.cond, err = bytecode.CompileCond(s.Cond)
	}
	for _, f := range s.Fetches {
		if err != nil {
			break
		}
		var p *bytecode.Program
		p, err = bytecode.CompileFetch(f)
		sp.fetches = append(sp.fetches, p)
	}
	if errors.Is(err, bytecode.ErrUnsupported) {
		// The reference evaluator takes any bound expression; the hit
		// costs more, the events are the same.
		return &siteProg{site: s, ref: true}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", siteName(s), err)
	}
	return sp, nil
}

// loadArgs fills env.args with the argument registers of abi, the
// preloaded arguments of the programs (later ones come from the stack
// through env.Arg).
func (e *hitEnv) loadArgs(abi probe.ABI) {
	r := e.regs
	e.abi = abi
	if abi == probe.ABIGoRegs {
		e.buf = [9]uint64{r.Rax, r.Rbx, r.Rcx, r.Rdi, r.Rsi, r.R8, r.R9, r.R10, r.R11}
		e.args = e.buf[:9]
	} else {
		e.buf = [9]uint64{r.Rdi, r.Rsi, r.Rdx, r.Rcx, r.R8, r.R9}
		e.args = e.buf[:6]
	}
}

// newEvent returns the event of sp at env, nil if its condition is false.
// Every read of tracee memory happens here, before the thread runs on.
func (eo *events) newEvent(th *thread, sp *siteProg, env *hitEnv, kind string) *probe.Event {
	s := sp.site
	env.loadArgs(s.ABI)
	if sp.ref {
		return refEvent(th, s, env, kind)
	}
	if sp.cond != nil && !sp.cond.Cond(env.args, env) {
		return nil
	}
	ev := baseEvent(th, s, kind)
	if len(sp.fetches) > 0 {
		ev.Args = make([]probe.Value, len(sp.fetches))
		for i, f := range sp.fetches {
			ev.Args[i] = f.Fetch(env.args, env)
		}
	}
	return ev
}

// refEvent is newEvent by the reference evaluator.
func refEvent(th *thread, s *probe.Site, env *hitEnv, kind string) *probe.Event {
	if !probe.EvalCond(s.Cond, env) {
		return nil
	}
	ev := baseEvent(th, s, kind)
	if len(s.Fetches) > 0 {
		ev.Args = make([]probe.Value, len(s.Fetches))
		for i, f := range s.Fetches {
			ev.Args[i] = probe.FetchValue(f, env)
		}
	}
	return ev
}

// hitEnvFor returns the tracer's reused environment set for a hit of th.
func (eo *events) hitEnvFor(th *thread, regs *unix.PtraceRegs) *hitEnv {
	e := &eo.env
	e.regs, e.pid, e.tid, e.mem = regs, th.p.pid, th.tid, th.p.mem
	return e
}

// queue holds an event until the thread that produced it runs again:
// formatting and writing it is off the path from the stop to PTRACE_CONT.
func (eo *events) queue(ev *probe.Event) {
	tr := eo.tr
	if !tr.shepherd {
		eo.pending = append(eo.pending, ev)
		if tr.pads != nil {
			// The drainer waits: records after this stop must not pass it.
			tr.pads.d.Hold()
		}
	}
}

// flush emits the queued events, in order, after the pads' records
// so far.
func (eo *events) flush() {
	// A stop without events (a signal's) leaves the rings to the drainer:
	// no lock, no drain on the loop's path.
	if pd := eo.tr.pads; pd != nil && len(eo.pending) > 0 {
		at := eo.pending[0].TimeNs
		for _, ev := range eo.pending {
			if ev.Kind == "exit" {
				// A thread's end comes after every record it made, some
				// stamped before records of others still unread.
				at = math.MaxInt64
			}
		}
		pd.d.Release(at, eo.pending)
		clear(eo.pending)
		eo.pending = eo.pending[:0]
		return
	}
	eo.emitPending()
}

// emitPending emits the queued events, in order.
func (eo *events) emitPending() {
	for i, ev := range eo.pending {
		eo.emit(ev)
		eo.pending[i] = nil
	}
	eo.pending = eo.pending[:0]
}

// baseEvent is the event of a hit of s on th, before its values.
func baseEvent(th *thread, s *probe.Site, kind string) *probe.Event {
	return &probe.Event{
		PID:        th.p.pid,
		TID:        th.tid,
		Probe:      s.Spec.Text,
		Func:       s.Func,
		Kind:       kind,
		ProbeIndex: s.Probe,
	}
}
