//go:build linux && amd64

package uprobe

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/utap/utap/internal/syscalls"
)

// arities are the argument counts the enter programs are made for: 6
// for raw_syscalls, else each traced call's own (tracepoints).
func (ss *sysSpec) arities() []int {
	if ss.tracepoints() == nil {
		return []int{6}
	}
	seen := map[int]bool{}
	var out []int
	for nr := range ss.calls {
		if n := len(syscalls.Lookup(nr).Args); !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// sysSession is the loaded system call side of a session.
type sysSession struct {
	*sysSpec
	confs, open, build *ebpf.Map
	enter              map[int]*ebpf.Program // by the arguments it reads (sysSpec.arities)
	exit               *ebpf.Program
	fdPaths            bool          // -y: read each call's fd paths when decoding it (syscall_user.go)
	stk                *stackDecoder // -k: the stacks of calls entered (syscall_stack.go)
}

// loadSys creates the system call maps, fills the per-number table and
// loads the programs, which use o's maps too; links come with attach. On
// error whatever was created is released.
func loadSys(o *kernelObjs, ss *sysSpec) (y *sysSession, err error) {
	y = &sysSession{sysSpec: ss}
	made := y // the returns below set y to nil first
	defer func() {
		if err != nil {
			made.close()
			y = nil
		}
	}()
	for _, p := range []struct {
		m  **ebpf.Map
		ms *ebpf.MapSpec
	}{{&y.confs, ss.confs}, {&y.open, ss.open}, {&y.build, ss.build}} {
		if *p.m, err = ebpf.NewMap(p.ms); err != nil {
			return nil, fmt.Errorf("creating the system call map %s: %w", p.ms.Name, hint(err))
		}
	}
	for nr, c := range ss.calls {
		if err := y.confs.Put(uint32(nr), ss.conf(c)); err != nil {
			return nil, fmt.Errorf("filling the system call table: %w", err)
		}
	}
	named := map[string]*ebpf.Map{mapEvents: o.events, mapStats: o.stats, mapTgids: o.tgids,
		mapSysConf: y.confs, mapSysOpen: y.open, mapSysBuild: y.build}
	load := func(ps *ebpf.ProgramSpec) (*ebpf.Program, error) {
		ps = ps.Copy()
		for name, m := range named {
			if m != nil {
				ps.Instructions.AssociateMap(name, m) // fails only for a map it does not use
			}
		}
		prog, err := ebpf.NewProgram(ps)
		if err != nil {
			return nil, fmt.Errorf("loading the system call program %s: %w", ps.Name, verifierReason(err))
		}
		return prog, nil
	}
	// The verifier takes most of a trace's start with many calls (≈ 2 s
	// for -S, one program at a time): the programs load side by side.
	type loaded struct {
		n    int // the enter program's arity; -1: the exit program
		prog *ebpf.Program
		err  error
	}
	done := make(chan loaded)
	go func() {
		prog, err := load(ss.exit)
		done <- loaded{-1, prog, err}
	}()
	for n, ps := range ss.enter {
		go func() {
			prog, err := load(ps)
			done <- loaded{n, prog, err}
		}()
	}
	y.enter = map[int]*ebpf.Program{}
	var errs []error
	for range len(ss.enter) + 1 {
		l := <-done
		switch {
		case l.err != nil:
			errs = append(errs, l.err)
		case l.n < 0:
			y.exit = l.prog
		default:
			y.enter[l.n] = l.prog
		}
	}
	if len(errs) > 0 {
		return nil, errs[0] // the deferred close releases the programs loaded
	}
	return y, nil
}

// attach attaches the two programs: nothing is traced before a tgid
// is in the map, so this goes before the command runs. A few calls go on
// their own tracepoints (syscalls:sys_enter_NAME...), so that the other
// calls of every process on the machine run no program at all (the
// raw_syscalls ones run for each, ≈0.3 µs here); many calls, or one the
// kernel has no tracepoint for, take raw_syscalls.
func (y *sysSession) attach(a *attacher) error {
	type event struct {
		names [2]string
		nargs int
	}
	group, events := "raw_syscalls", []event{{[2]string{"sys_enter", "sys_exit"}, 6}}
	if tps := y.tracepoints(); tps != nil {
		group, events = "syscalls", nil
		for nr, tp := range tps {
			events = append(events, event{[2]string{"sys_enter_" + tp, "sys_exit_" + tp}, len(syscalls.Lookup(nr).Args)})
		}
	}
	for _, ev := range events {
		for i, prog := range []*ebpf.Program{y.enter[ev.nargs], y.exit} {
			l, err := link.Tracepoint(group, ev.names[i], prog, nil)
			if err != nil {
				return fmt.Errorf("attaching to %s:%s: %w", group, ev.names[i], hint(err))
			}
			a.keep(l)
		}
	}
	return nil
}

// maxSysTracepoints is the most calls attached one by one.
const maxSysTracepoints = 32

// tracepoints names the traced calls' own tracepoints by number, nil
// when raw_syscalls serves them better (many, or one without its own).
func (ss *sysSpec) tracepoints() map[int]string {
	if len(ss.calls) > maxSysTracepoints {
		return nil
	}
	tps := map[int]string{}
	for nr := range ss.calls {
		in := syscalls.Lookup(nr)
		if in == nil || in.Tracepoint == "" {
			return nil
		}
		tps[nr] = in.Tracepoint
	}
	return tps
}

// close releases the system call maps and programs; the links went
// with the attacher's.
func (y *sysSession) close() {
	for _, p := range y.enter {
		p.Close()
	}
	if y.exit != nil {
		y.exit.Close()
	}
	for _, m := range []*ebpf.Map{y.confs, y.open, y.build} {
		if m != nil {
			m.Close()
		}
	}
}
