package uprobe

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/utap/utap/probe"
	"golang.org/x/sys/unix"
)

// session owns every kernel object of one trace. close releases them all,
// links first so that nothing new arrives while the ring is drained.
type session struct {
	sites     []probe.Site
	multi     bool  // uprobe_multi links are available and wanted
	retProbes bool  // return probes on RET instructions, never uretprobes
	rd        reads // how programs read tracee memory
	tally     bool  // count in place (tally.go), no records

	events, stats, tgids, times *ebpf.Map
	armed                       *ebpf.Map       // see returns.go
	progs                       []*ebpf.Program // distinct programs
	byCode                      map[string]int  // program text → progs index
	layout                      []*program      // site index → record layout
	placed                      []placement
	links                       []link.Link // kept referenced: a collected link detaches
	ring                        *ringbuf.Reader
	readDone                    chan error

	tallies, hist *ebpf.Map     // counting in place
	counted       []probe.Tally // read from them at close
}

// placement is one kernel probe: a spot of a site, with its program.
type placement struct {
	obj    string
	off    uint64
	cookie uint64 // the site's index
	uret   bool
	prog   int
}

// haveV4 says whether the kernel has signed division (the v4 ISA, 6.6+);
// a test turns it off to check the fallback sequence.
var haveV4 = func() bool { return features.HaveV4ISA() == nil }

const defaultRingSize = 16 << 20

// pollInterval bounds how long a record waits in the ring: programs only
// wake the reader when a quarter of the ring is unread.
const pollInterval = 10 * time.Millisecond

func newSession(ringSize int, follow, noMulti bool) (*session, error) {
	if ringSize == 0 {
		ringSize = defaultRingSize
	}
	s := &session{multi: !noMulti && features.HaveBPFLinkUprobeMulti() == nil, rd: kernelReads(), byCode: map[string]int{}}
	var err error
	s.events, err = ebpf.NewMap(&ebpf.MapSpec{Name: "utap_events", Type: ebpf.RingBuf, MaxEntries: uint32(ringSize)})
	if err != nil {
		return nil, fmt.Errorf("creating the ring buffer (%d bytes, a power of two multiple of the page size): %w", ringSize, hint(err))
	}
	s.stats, err = ebpf.NewMap(&ebpf.MapSpec{Name: "utap_stats", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: numStats})
	if err != nil {
		s.close()
		return nil, fmt.Errorf("creating the counters: %w", hint(err))
	}
	if follow {
		s.tgids, err = ebpf.NewMap(&ebpf.MapSpec{Name: "utap_tgids", Type: ebpf.Hash, KeySize: 4, ValueSize: 4, MaxEntries: 1 << 16})
		if err != nil {
			s.close()
			return nil, fmt.Errorf("creating the traced-process map: %w", hint(err))
		}
	}
	return s, nil
}

func (s *session) maps() maps {
	m := maps{events: s.events.FD(), stats: s.stats.FD(), tgids: -1, times: -1, armed: -1, tallies: -1, hist: -1,
		wakeAt: int(s.events.MaxEntries() / 4)}
	if s.tallies != nil {
		m.tallies, m.hist = s.tallies.FD(), s.hist.FD()
	}
	if s.tgids != nil {
		m.tgids = s.tgids.FD()
	}
	if s.times != nil {
		m.times, m.armed = s.times.FD(), s.armed.FD()
	}
	return m
}

// maxOpenCalls bounds the calls whose entry time is kept; the least
// recently entered are forgotten first (their returns get no duration).
const maxOpenCalls = 1 << 17

// load compiles every site and loads one program per distinct code: the
// sites of a glob usually share one, told apart by their attach cookie.
func (s *session) load(sites []probe.Site) error {
	s.sites = sites
	v4 := haveV4()
	if s.tally {
		if err := s.makeTallies(); err != nil {
			return err
		}
	}
	for i := range sites {
		if sites[i].Spec.Kind == probe.Return && s.times == nil {
			var err error
			s.times, err = ebpf.NewMap(&ebpf.MapSpec{Name: "utap_times", Type: ebpf.LRUHash, KeySize: keySize, ValueSize: 8, MaxEntries: maxOpenCalls})
			if err != nil {
				return fmt.Errorf("creating the entry-time map: %w", hint(err))
			}
			s.armed, err = ebpf.NewMap(&ebpf.MapSpec{Name: "utap_armed", Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1})
			if err != nil {
				return fmt.Errorf("creating the armed flag: %w", hint(err))
			}
		}
	}
	for i := range sites {
		site := &sites[i]
		pl, err := planSite(site, s.retProbes)
		if err != nil {
			return fmt.Errorf("probe %s: %w", site.Spec.Text, err)
		}
		c := config{kind: site.Spec.Kind, v4: v4, rd: s.rd, key: pl.key, tally: s.tally}
		p, err := compile(site, s.maps(), c)
		if err != nil {
			return fmt.Errorf("probe %s: %w", site.Spec.Text, err)
		}
		s.layout = append(s.layout, p)
		event, err := s.program(p.insns, site)
		if err != nil {
			return err
		}
		for _, sp := range pl.spots {
			prog := event
			if sp.stamp {
				if prog, err = s.program(compileStamp(s.maps(), pl.key), site); err != nil {
					return err
				}
			}
			s.placed = append(s.placed, placement{obj: site.Object, off: sp.off, cookie: uint64(i), uret: sp.uret, prog: prog})
		}
	}
	return nil
}

// program loads insns, or finds them loaded already.
func (s *session) program(insns asm.Instructions, site *probe.Site) (int, error) {
	key := insns.String()
	if i, ok := s.byCode[key]; ok {
		return i, nil
	}
	spec := &ebpf.ProgramSpec{
		Name: "utap_probe", Type: ebpf.Kprobe, License: "GPL", Instructions: insns, Flags: s.rd.progFlags(),
	}
	// Always a multi link when possible: closing a perf-link uprobe costs
	// ~0.16 s on 6.18 (BenchmarkAttach1000Perf), a multi link ~20 µs per site.
	if s.multi {
		spec.AttachType = ebpf.AttachTraceUprobeMulti
	}
	prog, err := ebpf.NewProgram(spec)
	if err != nil {
		return 0, fmt.Errorf("loading the program of probe %s: %w", site.Spec.Text, verifierReason(err))
	}
	s.progs = append(s.progs, prog)
	s.byCode[key] = len(s.progs) - 1
	return len(s.progs) - 1, nil
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
	type group struct {
		prog        int
		obj         string
		uret        bool
		offs, cooks []uint64
	}
	type gkey struct {
		prog int
		obj  string
		uret bool
	}
	groups := map[gkey]*group{}
	var order []*group
	for _, p := range s.placed {
		k := gkey{p.prog, p.obj, p.uret}
		g, ok := groups[k]
		if !ok {
			g = &group{prog: p.prog, obj: p.obj, uret: p.uret}
			groups[k] = g
			order = append(order, g)
		}
		g.offs = append(g.offs, p.off)
		g.cooks = append(g.cooks, p.cookie)
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
				opts := &link.UprobeMultiOptions{Addresses: g.offs, Cookies: g.cooks, PID: uint32(pid)}
				attach := ex.UprobeMulti
				if g.uret {
					attach = ex.UretprobeMulti
				}
				l, err := attach(nil, prog, opts)
				if err != nil {
					return fmt.Errorf("attaching %d probes to %s: %w", len(g.offs), g.obj, hint(err))
				}
				s.links = append(s.links, l)
				continue
			}
			for j, off := range g.offs {
				opts := &link.UprobeOptions{Address: off, Cookie: g.cooks[j], PID: pid}
				attach := ex.Uprobe
				if g.uret {
					attach = ex.Uretprobe
				}
				l, err := attach("", prog, opts)
				if err != nil {
					site := &s.sites[g.cooks[j]]
					return fmt.Errorf("attaching probe %s at %s+%#x: %w", site.Spec.Text, g.obj, off, hint(err))
				}
				s.links = append(s.links, l)
			}
		}
	}
	return s.arm(true)
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
		if err := decode(rec.RawSample, s.sites, s.layout, &ev); err != nil {
			return fmt.Errorf("decoding an event: %w", err)
		}
		emit(&ev)
	}
}

func (s *session) startReading(emit func(*probe.Event)) error {
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
	errs := []error{s.arm(false), s.detach()}
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
	for _, p := range s.progs {
		p.Close()
	}
	for _, m := range []*ebpf.Map{s.events, s.stats, s.tgids, s.times, s.armed, s.tallies, s.hist} {
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
