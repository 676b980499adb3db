//go:build linux && amd64

package uprobe

import (
	"errors"

	"github.com/cilium/ebpf/features"
	"github.com/utap/utap/probe"
)

// session coordinates the parts of one trace, loaded from a Spec: objs
// (maps, programs), att (links), sites (the layouts the reader
// decodes with), traced (the tgid set, -f), ex (exec following), sys
// (system call sites) and reader (the events ring). close releases them
// all, links first so that nothing new arrives while the ring is drained.
type session struct {
	spec   *Spec
	tally  bool // count in place (tally.go), no records
	objs   *kernelObjs
	att    *attacher
	sites  *siteTable
	traced *tracedSet
	ex     *execFollower // with exec following: new images of traced processes
	sys    *sysSession   // system call sites (syscall.go)
	// sysRunning: system calls still in progress when the trace ended,
	// not shown (sysSession.ended).
	sysRunning int
	// ended: calls their thread ended inside (ended.go), read at close.
	ended   uint64
	reader  *ringReader
	counted []probe.Tally // read from the tally maps at close
	// aggs reads the aggregation maps (aggread.go), nil for none; emit
	// is where its last emits go at close, once the reader is done.
	aggs *aggReader
	emit func(*probe.Event)
}

// haveV4 says whether the kernel has signed division (the v4 ISA, 6.6+);
// a test turns it off to check the fallback sequence.
var haveV4 = func() bool { return features.HaveV4ISA() == nil }

const defaultRingSize = 16 << 20

// stackRingSize is the ring of a trace copying stacks (-k, dwarf mode).
const stackRingSize = 64 << 20

// load creates spec's maps and loads its programs: the Object. On error
// whatever was created is released.
func load(spec *Spec, sites []probe.Site, tally bool) (*session, error) {
	o, err := loadObjects(spec)
	if err != nil {
		return nil, err
	}
	s := &session{spec: spec, tally: tally, objs: o,
		sites:  &siteTable{spec: spec, sites: sites, stk: &stackDecoder{}},
		traced: &tracedSet{tgids: o.tgids, follow: spec.cfg.follow}}
	s.att = &attacher{objs: o, multi: spec.multi, site: s.sites.site}
	if len(spec.aggs) > 0 {
		s.aggs = &aggReader{layouts: spec.aggs, maps: o.aggs, sites: s.sites}
	}
	if spec.sys != nil {
		if s.sys, err = loadSys(o, spec.sys); err != nil {
			s.close()
			return nil, err
		}
		s.sys.stk = s.sites.stk
	}
	return s, nil
}

// followForks starts the fork tracker, which adds the children of traced
// processes to the traced set.
func (s *session) followForks() error {
	prog, l, err := followForks(s.objs.tgids)
	if err != nil {
		return err
	}
	s.objs.keep(prog)
	s.att.keep(l)
	return nil
}

// followExecs prepares the following of execs (exec.go). A launched
// command's execs are held by ptrace (hold.go), and so are an attached
// process's where it can be seized (holdattach.go); else by the tracker.
func (s *session) followExecs(resolve func(pid int) ([]probe.Site, error), retProbes, follow, launched bool) error {
	ex := &execFollower{resolve: resolve, add: s.addImage, retProbes: retProbes, follow: follow, attached: !launched}
	// An attached process's hold is chosen once its probes are in
	// (holdExecs): by ptrace if it can be seized, else by the tracker.
	if err := followExecs(s.objs, s.sites.sites, ex, false); err != nil {
		return err
	}
	s.ex = ex
	return nil
}

// addImage generates, loads and attaches the programs of more sites, for
// pids as attach.
func (s *session) addImage(sites []probe.Site, retProbes bool, pids []int) error {
	plans, err := planAll(sites, retProbes)
	if err != nil {
		return err
	}
	n := len(s.spec.placed)
	if err := s.sites.add(sites, plans); err != nil {
		return err
	}
	if err := s.objs.loadProgs(); err != nil {
		return err
	}
	return s.att.attach(s.spec.placed[n:], pids)
}

// attach places every probe for pids, after putting them in the traced
// set.
func (s *session) attach(pids []int) error {
	pids, err := s.traced.add(pids)
	if err != nil {
		return err
	}
	return s.att.attach(s.spec.placed, pids)
}

// startReading starts delivering events, and following execs: both
// callers have attached the first probes.
func (s *session) startReading(emit func(*probe.Event)) error {
	s.ex.serve()
	if s.tally {
		return nil // nothing comes through the ring
	}
	s.emit = emit
	s.reader = &ringReader{sites: s.sites, sys: s.sys, execStops: s.ex != nil && s.ex.link != nil, aggs: s.aggs}
	return s.reader.start(s.objs.events, emit)
}

// close detaches, drains what is already in the ring, and releases all.
func (s *session) close() (st stats, err error) {
	errs := []error{s.ex.stop(), s.att.arm(false), s.att.detach()}
	if s.reader != nil {
		errs = append(errs, s.reader.stop())
	}
	if s.aggs != nil && s.emit != nil {
		// The probes are out: these totals are final.
		errs = append(errs, s.aggs.emit(s.emit))
	}
	if s.objs.tallies != nil {
		var err error
		s.counted, err = s.objs.readTallies(s.sites.sites)
		errs = append(errs, err)
	}
	st = s.objs.readStats()
	s.ended = s.endedWithThread()
	if s.sys != nil {
		s.sysRunning = s.sys.ended(s.emit) // after detach: no exit can take one
		s.sys.close()
	}
	s.objs.close()
	return st, errors.Join(errs...)
}
