package uprobe

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/utap/utap/probe"
	"golang.org/x/sys/unix"
)

// session owns every kernel object of one trace. close releases them all,
// links first so that nothing new arrives while the ring is drained.
type session struct {
	sites []probe.Site
	multi bool // uprobe_multi links are available and wanted

	events, lost, tgids *ebpf.Map
	progs               []*ebpf.Program // distinct programs
	progOf              []int           // site index → progs index
	layout              []*program      // site index → record layout
	multiProg           []bool          // progs index → loaded for uprobe_multi
	links               []link.Link     // kept referenced: a collected link detaches
	rd                  *ringbuf.Reader
	readDone            chan error
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
	s := &session{multi: !noMulti && features.HaveBPFLinkUprobeMulti() == nil}
	var err error
	s.events, err = ebpf.NewMap(&ebpf.MapSpec{Name: "utap_events", Type: ebpf.RingBuf, MaxEntries: uint32(ringSize)})
	if err != nil {
		return nil, fmt.Errorf("creating the ring buffer (%d bytes, a power of two multiple of the page size): %w", ringSize, hint(err))
	}
	s.lost, err = ebpf.NewMap(&ebpf.MapSpec{Name: "utap_lost", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 1})
	if err != nil {
		s.close()
		return nil, fmt.Errorf("creating the lost-event counter: %w", hint(err))
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
	m := maps{events: s.events.FD(), lost: s.lost.FD(), tgids: -1, wakeAt: int(s.events.MaxEntries() / 4)}
	if s.tgids != nil {
		m.tgids = s.tgids.FD()
	}
	return m
}

// load compiles every site and loads one program per distinct code: the
// sites of a glob usually share one, told apart by their attach cookie.
func (s *session) load(sites []probe.Site) error {
	s.sites = sites
	v4 := haveV4()
	byCode := map[string]int{}
	var specs []*ebpf.ProgramSpec
	var users []int
	for i := range sites {
		site := &sites[i]
		p, err := compile(site, site.Spec.Kind, s.maps(), v4)
		if err != nil {
			return fmt.Errorf("probe %s: %w", site.Spec.Text, err)
		}
		s.layout = append(s.layout, p)
		key := p.insns.String()
		idx, ok := byCode[key]
		if !ok {
			idx = len(specs)
			byCode[key] = idx
			specs = append(specs, &ebpf.ProgramSpec{
				Name: "utap_probe", Type: ebpf.Kprobe, License: "GPL", Instructions: p.insns,
			})
			users = append(users, 0)
		}
		users[idx]++
		s.progOf = append(s.progOf, idx)
	}
	for i, spec := range specs {
		// Always a multi link when possible: closing a perf-link uprobe costs
		// ~0.16 s on 6.18 (BenchmarkAttach1000Perf), a multi link ~20 µs per site.
		multi := s.multi
		if multi {
			spec.AttachType = ebpf.AttachTraceUprobeMulti
		}
		prog, err := ebpf.NewProgram(spec)
		if err != nil {
			return fmt.Errorf("loading the program of probe %s: %w", s.firstUser(i).Spec.Text, verifierReason(err))
		}
		s.progs = append(s.progs, prog)
		s.multiProg = append(s.multiProg, multi)
	}
	return nil
}

func (s *session) firstUser(prog int) *probe.Site {
	for i, p := range s.progOf {
		if p == prog {
			return &s.sites[i]
		}
	}
	return nil
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

// attach places every site's uprobe, filtered on each of pids (0: every
// process, the programs then filter on the tgid map).
func (s *session) attach(pids []int) error {
	type group struct {
		obj         string
		offs, cooks []uint64
	}
	groups := map[[2]any]*group{}
	var order [][2]any
	for i := range s.sites {
		k := [2]any{s.progOf[i], s.sites[i].Object}
		g, ok := groups[k]
		if !ok {
			g = &group{obj: s.sites[i].Object}
			groups[k] = g
			order = append(order, k)
		}
		g.offs = append(g.offs, s.sites[i].FileOffset)
		g.cooks = append(g.cooks, uint64(i))
	}
	for _, k := range order {
		g := groups[k]
		pi := k[0].(int)
		ex, err := link.OpenExecutable(g.obj)
		if err != nil {
			return fmt.Errorf("opening %s: %w", g.obj, err)
		}
		for _, pid := range pids {
			if s.multiProg[pi] {
				l, err := ex.UprobeMulti(nil, s.progs[pi], &link.UprobeMultiOptions{
					Addresses: g.offs, Cookies: g.cooks, PID: uint32(pid),
				})
				if err != nil {
					return fmt.Errorf("attaching %d probes to %s: %w", len(g.offs), g.obj, hint(err))
				}
				s.links = append(s.links, l)
				continue
			}
			for j, off := range g.offs {
				l, err := ex.Uprobe("", s.progs[pi], &link.UprobeOptions{Address: off, Cookie: g.cooks[j], PID: pid})
				if err != nil {
					site := &s.sites[g.cooks[j]]
					return fmt.Errorf("attaching probe %s at %s+%#x: %w", site.Spec.Text, g.obj, off, hint(err))
				}
				s.links = append(s.links, l)
			}
		}
	}
	return nil
}

// read delivers events until the reader is flushed or closed.
func (s *session) read(emit func(*probe.Event)) error {
	var rec ringbuf.Record
	var ev probe.Event
	for {
		s.rd.SetDeadline(time.Now().Add(pollInterval))
		err := s.rd.ReadInto(&rec)
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
	rd, err := ringbuf.NewReader(s.events)
	if err != nil {
		return fmt.Errorf("opening the ring buffer: %w", err)
	}
	s.rd = rd
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
// It returns how many events the programs could not reserve room for.
func (s *session) close() (lost uint64, err error) {
	errs := []error{s.detach()}
	if s.rd != nil {
		errs = append(errs, s.rd.Flush(), <-s.readDone, s.rd.Close())
	}
	if s.lost != nil {
		var per []uint64
		if e := s.lost.Lookup(uint32(0), &per); e == nil {
			for _, n := range per {
				lost += n
			}
		}
	}
	for _, p := range s.progs {
		p.Close()
	}
	for _, m := range []*ebpf.Map{s.events, s.lost, s.tgids} {
		if m != nil {
			m.Close()
		}
	}
	return lost, errors.Join(errs...)
}

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
