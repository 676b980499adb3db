//go:build linux && amd64

package uprobe

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/utap/utap/probe"
	"golang.org/x/sys/unix"
)

// session owns every kernel object of one trace, loaded from a Spec.
// close releases them all, links first so that nothing new arrives while
// the ring is drained.
type session struct {
	*Spec
	sites []probe.Site
	tally bool // count in place (tally.go), no records
	// mu guards sites and Spec.layout, which a followed exec extends
	// (exec.go) while the reader decodes with them.
	mu  sync.Mutex
	ex  *execFollower // with Follow: new images of followed processes
	sys *sysSession   // system call sites (syscall.go)

	events, stats, tgids, times *ebpf.Map
	execs                       *ebpf.Map       // with Follow (exec.go)
	armed                       *ebpf.Map       // see returns.go
	tallies, hist               *ebpf.Map       // counting in place
	progs                       []*ebpf.Program // Spec.progs, loaded
	procProgs                   []*ebpf.Program // process events (proc.go)
	links                       []link.Link     // kept referenced: a collected link detaches
	ring                        *ringbuf.Reader
	readDone                    chan error

	counted []probe.Tally // read from the tally maps at close
}

// haveV4 says whether the kernel has signed division (the v4 ISA, 6.6+);
// a test turns it off to check the fallback sequence.
var haveV4 = func() bool { return features.HaveV4ISA() == nil }

const defaultRingSize = 16 << 20

// pollInterval bounds how long a record waits in the ring: programs only
// wake the reader when a quarter of the ring is unread.
const pollInterval = 10 * time.Millisecond

// mapErrors say what a map is for when the kernel refuses to create it.
var mapErrors = map[string]string{
	mapEvents:  "creating the ring buffer (%d bytes, a power of two multiple of the page size)",
	mapStats:   "creating the counters",
	mapTgids:   "creating the traced-process map",
	mapTimes:   "creating the entry-time map",
	mapArmed:   "creating the armed flag",
	mapTallies: "creating the counters of -c",
	mapHist:    "creating the duration histograms of -c",
	mapExecs:   "creating the ring of followed execs",
}

// load creates spec's maps and loads its programs: the Object. On error
// whatever was created is released.
func load(spec *Spec, sites []probe.Site, tally bool) (*session, error) {
	s := &session{Spec: spec, sites: sites, tally: tally}
	for _, name := range []string{mapEvents, mapStats, mapTgids, mapTimes, mapArmed, mapTallies, mapHist, mapExecs} {
		ms := spec.Maps[name]
		if ms == nil {
			continue
		}
		m, err := ebpf.NewMap(ms)
		if err != nil {
			s.close()
			what := mapErrors[name]
			if name == mapEvents {
				what = fmt.Sprintf(what, ms.MaxEntries)
			}
			return nil, fmt.Errorf("%s: %w", what, hint(err))
		}
		*s.mapNamed(name) = m
	}
	if err := s.loadProgs(); err != nil {
		s.close()
		return nil, err
	}
	if spec.sys != nil {
		if err := s.loadSys(spec.sys); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// loadProgs loads the Spec's programs not loaded yet.
func (s *session) loadProgs() error {
	for i := len(s.progs); i < len(s.Spec.progs); i++ {
		ps := s.Programs[s.Spec.progs[i]].Copy()
		for ref := range s.Maps {
			// Fails only for a map this program does not use.
			ps.Instructions.AssociateMap(ref, *s.mapNamed(ref))
		}
		prog, err := ebpf.NewProgram(ps)
		if err != nil {
			return fmt.Errorf("loading the program of probe %s: %w", s.probes[i], verifierReason(err))
		}
		s.progs = append(s.progs, prog)
	}
	return nil
}

// mapNamed is where the session keeps the map of that name.
func (s *session) mapNamed(name string) **ebpf.Map {
	switch name {
	case mapEvents:
		return &s.events
	case mapStats:
		return &s.stats
	case mapTgids:
		return &s.tgids
	case mapTimes:
		return &s.times
	case mapArmed:
		return &s.armed
	case mapTallies:
		return &s.tallies
	case mapExecs:
		return &s.execs
	}
	return &s.hist
}

// verifierReason keeps the verifier's last lines (its reason), not the log.
func verifierReason(err error) error {
	var ve *ebpf.VerifierError
	if errors.As(err, &ve) {
		n := len(ve.Log)
		lines := ve.Log[max(0, n-4):]
		return fmt.Errorf("verifier rejected it: %w\n\t%s", ve.Cause, strings.Join(lines, "\n\t"))
	}
	return hint(err)
}

// attach places every probe, filtered on each of pids (0: every process,
// the programs then filter on the tgid map).
func (s *session) attach(pids []int) error {
	return s.attachPlaced(s.placed, pids)
}

// attachPlaced places the probes of placed.
func (s *session) attachPlaced(placed []placement, pids []int) error {
	type group struct {
		prog        int
		obj         string
		uret        bool
		offs, cooks []uint64
		refs        []uint64 // nil when no probe of the group has a semaphore
	}
	type gkey struct {
		prog int
		obj  string
		uret bool
	}
	refs := refCtrs(placed)
	groups := map[gkey]*group{}
	var order []*group
	for _, p := range placed {
		k := gkey{p.prog, p.obj, p.uret}
		g, ok := groups[k]
		if !ok {
			g = &group{prog: p.prog, obj: p.obj, uret: p.uret}
			groups[k] = g
			order = append(order, g)
		}
		g.offs = append(g.offs, p.off)
		g.cooks = append(g.cooks, p.cookie)
		if r := refs[objOff{p.obj, p.off}]; r != 0 && g.refs == nil {
			g.refs = make([]uint64, len(g.offs)-1, len(g.offs))
		}
		if g.refs != nil {
			g.refs = append(g.refs, refs[objOff{p.obj, p.off}])
		}
	}
	// The kernel runs a breakpoint's consumers newest first: attaching in
	// reverse makes two probes at one address report in the user's order.
	slices.Reverse(order)
	for _, g := range order {
		ex, err := link.OpenExecutable(g.obj)
		if err != nil {
			return fmt.Errorf("opening %s: %w", g.obj, err)
		}
		prog := s.progs[g.prog]
		for _, pid := range pids {
			if s.multi {
				opts := &link.UprobeMultiOptions{Addresses: g.offs, Cookies: g.cooks, RefCtrOffsets: g.refs, PID: uint32(pid)}
				attach := ex.UprobeMulti
				if g.uret {
					attach = ex.UretprobeMulti
				}
				l, err := attach(nil, prog, opts)
				if err != nil {
					return s.whichRefused(g.obj, g.offs, g.cooks, func(off, cookie uint64) error {
						one := &link.UprobeMultiOptions{Addresses: []uint64{off}, Cookies: []uint64{cookie}, PID: uint32(pid)}
						if r := refs[objOff{g.obj, off}]; r != 0 {
							one.RefCtrOffsets = []uint64{r}
						}
						l, err := attach(nil, prog, one)
						if err == nil {
							l.Close()
						}
						return err
					}, err)
				}
				s.links = append(s.links, l)
				continue
			}
			for j, off := range g.offs {
				opts := &link.UprobeOptions{Address: off, Cookie: g.cooks[j], PID: pid, RefCtrOffset: refs[objOff{g.obj, off}]}
				attach := ex.Uprobe
				if g.uret {
					attach = ex.Uretprobe
				}
				l, err := attach("", prog, opts)
				if err != nil {
					return s.refusedAt(g.obj, off, g.cooks[j], err)
				}
				s.links = append(s.links, l)
			}
		}
	}
	return s.arm(true)
}

// objOff is one kernel uprobe: a file and an offset in it.
type objOff struct {
	obj string
	off uint64
}

// refCtrs gives every probe at a USDT site the site's semaphore: the
// kernel keeps one uprobe per file and offset, and refuses (EINVAL) a
// second consumer there whose reference counter differs, e.g. an address
// probe placed on the same nop.
func refCtrs(placed []placement) map[objOff]uint64 {
	refs := map[objOff]uint64{}
	for _, p := range placed {
		if p.refCtr != 0 {
			refs[objOff{p.obj, p.off}] = p.refCtr
		}
	}
	return refs
}

// whichRefused names the probe the kernel refused when a link of many
// failed: each address is tried alone (try), and the first that fails is
// the error, with its probe, function and instruction.
func (s *session) whichRefused(obj string, offs, cookies []uint64, try func(off, cookie uint64) error, err error) error {
	for i, off := range offs {
		if e := try(off, cookies[i]); e != nil {
			return s.refusedAt(obj, off, cookies[i], e)
		}
	}
	return fmt.Errorf("attaching %d probes to %s: %w", len(offs), obj, hint(err))
}

// refusedAt is the error of the probe the kernel refused at file offset off
// of obj: its spec, function and offset, and instruction bytes.
func (s *session) refusedAt(obj string, off, cookie uint64, err error) error {
	site := &s.sites[cookie]
	at := where(site)
	if off != site.FileOffset && site.Func != "" {
		at = fmt.Sprintf("%s+%#x", site.Func, site.Addr-site.FuncAddr+off-site.FileOffset)
	}
	insn := ""
	if code, rerr := readCode(obj, off, 15); rerr == nil {
		insn = fmt.Sprintf(" (% x)", code[:min(len(code), 8)])
	}
	if errors.Is(err, errENOTSUPP) {
		err = fmt.Errorf("%w: %w", probe.ErrUnprobeable, err)
	}
	return fmt.Errorf("attaching probe %s at %s%s in %s: %w", site.Spec.Text, at, insn, obj, hint(err))
}

// arm lets return probes time calls once every link is in, and stops
// them before links come out (returns.go).
func (s *session) arm(on bool) error {
	if s.armed == nil {
		return nil
	}
	v := uint32(0)
	if on {
		v = 1
	}
	if err := s.armed.Put(uint32(0), v); err != nil {
		return fmt.Errorf("arming the return probes: %w", err)
	}
	return nil
}

// read delivers events until the reader is flushed or closed.
func (s *session) read(emit func(*probe.Event)) error {
	var rec ringbuf.Record
	var ev probe.Event
	for {
		s.ring.SetDeadline(time.Now().Add(pollInterval))
		err := s.ring.ReadInto(&rec)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			continue
		}
		if errors.Is(err, ringbuf.ErrFlushed) || errors.Is(err, ringbuf.ErrClosed) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading events: %w", err)
		}
		show := true
		switch {
		case isProcRecord(rec.RawSample):
			show, err = s.decodeProc(rec.RawSample, &ev)
		case s.sys != nil && isSysRecord(rec.RawSample):
			err = s.sys.decode(rec.RawSample, &ev)
		default:
			s.mu.Lock()
			err = decode(rec.RawSample, s.sites, s.layout, &ev)
			s.mu.Unlock()
		}
		if err != nil {
			return fmt.Errorf("decoding an event: %w", err)
		}
		if show {
			emit(&ev)
		}
	}
}

// startReading starts delivering events, and following execs: both
// callers have attached the first probes.
func (s *session) startReading(emit func(*probe.Event)) error {
	s.serveExecs()
	if s.tally {
		return nil // nothing comes through the ring
	}
	rd, err := ringbuf.NewReader(s.events)
	if err != nil {
		return fmt.Errorf("opening the ring buffer: %w", err)
	}
	s.ring = rd
	s.readDone = make(chan error, 1)
	go func() { s.readDone <- s.read(emit) }()
	return nil
}

// detach closes every link; no probe fires afterwards.
func (s *session) detach() error {
	var errs []error
	for _, l := range s.links {
		if err := l.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	s.links = nil
	return errors.Join(errs...)
}

// close detaches, drains what is already in the ring, and releases all.
func (s *session) close() (st stats, err error) {
	errs := []error{s.stopFollowingExecs(), s.arm(false), s.detach()}
	if s.ring != nil {
		errs = append(errs, s.ring.Flush(), <-s.readDone, s.ring.Close())
	}
	if s.tallies != nil {
		var err error
		s.counted, err = s.readTallies()
		errs = append(errs, err)
	}
	if s.stats != nil {
		for i := range st {
			var per []uint64
			if e := s.stats.Lookup(uint32(i), &per); e == nil {
				for _, n := range per {
					st[i] += n
				}
			}
		}
	}
	for _, p := range append(s.progs, s.procProgs...) {
		p.Close()
	}
	s.closeSys()
	for _, m := range []*ebpf.Map{s.events, s.stats, s.tgids, s.times, s.armed, s.tallies, s.hist, s.execs} {
		if m != nil {
			m.Close()
		}
	}
	return st, errors.Join(errs...)
}

// stats are the programs' counters, summed over CPUs.
type stats [numStats]uint64

// hint adds what to do to the errno-shaped errors of loading and attaching.
func hint(err error) error {
	switch {
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("%w (run as root or grant CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN)", err)
	case errors.Is(err, errENOTSUPP):
		return fmt.Errorf("%w (the kernel cannot place a uprobe on this instruction; use --backend ptrace)", err)
	case errors.Is(err, ebpf.ErrNotSupported):
		return fmt.Errorf("%w (this kernel lacks it; try --backend ptrace)", err)
	}
	return err
}

// errENOTSUPP is the kernel-internal ENOTSUPP (524) that uprobe
// registration returns for an instruction it will not probe.
const errENOTSUPP = unix.Errno(524)
