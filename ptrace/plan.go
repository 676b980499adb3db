//go:build linux && amd64

package ptrace

import (
	"errors"
	"fmt"
	"strings"

	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/probe"
	"github.com/utap/utap/ssol"
	"github.com/utap/utap/uretprobe"
)

// planned is what install writes: the breakpoints and the return probes.
type planned struct {
	bps     map[uint64]*breakpoint
	groups  []*retGroup
	hijacks bool // some call's return address will be hijacked: map the trampoline
	seen    map[object]bool
	sems    map[uint64]object // USDT semaphores to increment (usdt.go), by runtime address
	pads    []*padSite        // sites that get a pad instead of an int3 (pads.go)
}

// planner computes the breakpoints of sites in one process, analysing
// every instruction before anything is written.
type planner struct {
	tr     *tracer
	p      *process
	ms     []mapping
	objs   map[string]func(mapping) bool // is a mapping of the site's object, by path
	byFunc map[uint64]*retGroup          // by the function's runtime start
	shstk  int8                          // CET shadow stack: 0 not read yet, 1 on, -1 off
	only   map[object]bool               // objects to plan for, nil for all (loader.go)
	planned
}

func (bk *breakpoints) plan(p *process, sites []probe.Site, only map[object]bool) (*planned, error) {
	tr := bk.tr
	ms, err := readMaps(p.pid)
	if err != nil {
		return nil, err
	}
	pl := &planner{tr: tr, p: p, ms: ms, objs: map[string]func(mapping) bool{}, byFunc: map[uint64]*retGroup{}, only: only}
	pl.bps = map[uint64]*breakpoint{}
	for i := range sites {
		s := &sites[i]
		if s.Spec != nil && s.Spec.Kind == probe.Return {
			if err := pl.ret(s); err != nil {
				return nil, err
			}
			continue
		}
		addr, ok, err := pl.addr(s, s.FileOffset)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // not mapped in this process image
		}
		bp, err := pl.bp(s, addr)
		if errors.Is(err, errForeign) {
			pl.tr.notices = append(pl.tr.notices, err.Error()+": left to it, not probed")
			continue
		}
		if err != nil {
			return nil, err
		}
		sp, err := compileSite(s)
		if err != nil {
			return nil, err
		}
		bp.sites = append(bp.sites, sp)
		pl.addSem(pl.semPlan(s, addr), bp.obj)
	}
	// Returns hijacked by breakpoints (the trampoline) or by pads (their
	// shadow stacks), in this plan or an earlier one: a dlopen's unwinder
	// must not meet them.
	if pl.hijacks || p.tramp != 0 || (p.pads != nil && p.pads.shadow.addr != 0) {
		if err := pl.unwinders(); err != nil {
			return nil, err
		}
	}
	pl.loaderWatch()
	pl.signalWatch()
	pl.syncWatch()
	pl.padPlan()
	pl.seen = execObjects(ms)
	return &pl.planned, nil
}

// addr returns the runtime address of the file offset off of s's object,
// refusing writable code and rseq critical sections.
func (pl *planner) addr(s *probe.Site, off uint64) (uint64, bool, error) {
	is, ok := pl.objs[s.Object]
	if !ok {
		is = proc.FileMatcher(s.Object)
		pl.objs[s.Object] = is
	}
	m, ok := proc.MappingOf(pl.ms, is, off)
	if !ok {
		return 0, false, nil
	}
	if mo, _ := execObject(m); !pl.planning(mo) {
		return 0, false, nil // probed already
	}
	addr := m.Start + off - m.Offset
	if strings.Contains(m.Perms, "w") {
		// Code the program may rewrite (a JIT, self-modifying code) would
		// overwrite the int3 or copy it.
		return 0, false, fmt.Errorf("%s: %w: %#x is in a writable and executable mapping (%s %s)",
			siteName(s), ErrRefused, addr, m.Perms, m.Path)
	}
	if err := pl.checkRseq(s, m, addr); err != nil {
		return 0, false, err
	}
	return addr, true, nil
}

// bp returns the breakpoint planned at addr, analysing its instruction
// the first time.
func (pl *planner) bp(s *probe.Site, addr uint64) (*breakpoint, error) {
	if bp := pl.bps[addr]; bp != nil {
		return bp, nil
	}
	code := make([]byte, 16)
	n, err := readCode(pl.p.mem, code, addr)
	if err != nil {
		return nil, fmt.Errorf("%s: reading code at %#x: %w", siteName(s), addr, err)
	}
	pl.unpatch(code[:n], addr)
	if code[0] == 0xcc {
		return nil, fmt.Errorf("%s at %#x: %w", siteName(s), addr, errForeign)
	}
	in, err := ssol.Analyze(code[:n], addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", siteName(s), ErrRefused, err)
	}
	bp := &breakpoint{addr: addr, orig: code[0], action: in.Action, in: in, text: in.Text, code: code[:n], name: siteName(s),
		obj: objectAt(pl.ms, addr)}
	pl.bps[addr] = bp
	return bp, nil
}

// unpatch puts back the original bytes of breakpoints and pad jumps
// already in.
func (pl *planner) unpatch(code []byte, addr uint64) {
	for a, bp := range pl.p.bps {
		if a >= addr && a < addr+uint64(len(code)) {
			code[a-addr] = bp.orig
		}
	}
	if pl.p.pads == nil {
		return
	}
	for _, ps := range pl.p.pads.sites {
		for i, b := range ps.orig {
			if a := ps.from() + uint64(i); a >= addr && a < addr+uint64(len(code)) {
				code[a-addr] = b
			}
		}
	}
}

// ret plans the return probe s: a hidden entry breakpoint that hijacks
// the return address, or breakpoints at the entry and every RET.
func (pl *planner) ret(s *probe.Site) error {
	// The function's start: the return address is at [rsp] there.
	startOff := s.FileOffset - (s.Addr - s.FuncAddr)
	start, ok, err := pl.addr(s, startOff)
	if err != nil || !ok {
		return err
	}
	sp, err := compileSite(s)
	if err != nil {
		return err
	}
	if g := pl.byFunc[start]; g != nil {
		g.sites = append(g.sites, sp)
		g.args = g.args || s.UsesEntryArgs()
		return nil
	}
	plan, err := uretprobe.PlanReturn(s, start, func() ([]byte, error) {
		code := make([]byte, s.FuncSize)
		if err := pl.p.mem.ReadByMem(code, start); err != nil {
			return nil, err
		}
		pl.unpatch(code, start)
		return code, nil
	}, uretprobe.Options{ShadowStack: pl.shadowStack()})
	if err != nil {
		return fmt.Errorf("%s: %w", siteName(s), err)
	}
	g := &retGroup{sites: []*siteProg{sp}, method: plan.Method, goABI: s.GoFunc, args: s.UsesEntryArgs()}
	pl.byFunc[start] = g
	pl.groups = append(pl.groups, g)
	bp, err := pl.bp(s, plan.Entry)
	if err != nil {
		return err
	}
	if g.method == uretprobe.Hijack {
		bp.hijack = g
		pl.hijacks = true
		return nil
	}
	bp.enter = append(bp.enter, g)
	for _, r := range plan.Rets {
		bp, err := pl.bp(s, r)
		if err != nil {
			return err
		}
		bp.rets = append(bp.rets, g)
	}
	return nil
}

// shadowStack tells whether the process runs with the CET shadow stack,
// on which a hijacked return faults.
func (pl *planner) shadowStack() bool {
	if pl.shstk == 0 {
		pl.shstk = -1
		if on, _ := shadowStackEnabled(pl.p.pid); on {
			pl.shstk = 1
		}
	}
	return pl.shstk > 0
}

// shadowStackEnabled is a variable so tests can take the CET path on
// machines without it.
var shadowStackEnabled = defaultShadowStackEnabled

var defaultShadowStackEnabled = uretprobe.ShadowStackEnabled
