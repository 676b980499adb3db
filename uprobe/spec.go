//go:build linux && amd64

package uprobe

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/utap/utap/probe"
)

// The maps of a trace, by name: programs reference them so (mapPtr), and
// loading a Spec resolves the names to the kernel's objects.
const (
	mapEvents  = "utap_events"
	mapStats   = "utap_stats"
	mapTgids   = "utap_tgids"
	mapTimes   = "utap_times"
	mapArmed   = "utap_armed"
	mapTallies = "utap_tallies"
	mapHist    = "utap_hist"
	mapExecs   = "utap_execs" // execs of followed processes (exec.go)
	// Aggregating in place (agg.go): a map per spec, named after its
	// probe index, and one zeroed value their new entries copy.
	mapAggPrefix = "utap_agg"
	mapAggZero   = "utap_aggzero"
)

// Spec is the BPF side of a trace, generated from its sites and their plans
// without touching the kernel: the maps and programs (a cilium/ebpf
// CollectionSpec whose programs name the maps they use), each program's
// probe for messages, the record layouts, and where each program attaches.
// A session loads it (the Object) and attaches it.
type Spec struct {
	*ebpf.CollectionSpec
	multi  bool       // programs for uprobe_multi links
	progs  []string   // program names, in load order
	probes []string   // the probe each program was first made for
	layout []*program // site index → record layout
	placed []placement
	sys    *sysSpec // system call sites (syscall.go), nil for none
	// aggs are the aggregation maps' layouts by probe index (agg.go);
	// aggWhy says, by spec text, why an aggregated spec sends events.
	aggs   map[int]*aggLayout
	aggWhy map[string]string
	aggIn  map[int]bool // probe indices with a site aggregating in its map

	// What more sites are generated with: a followed process's new image
	// adds its own (addSites) after the Spec is loaded.
	maps   maps
	cfg    specConfig
	byCode map[string]int // program code → index in progs
}

// specConfig is what the kernel and the trace's options decide.
type specConfig struct {
	ringSize int
	follow   bool      // the programs filter on the tgid map
	execs    bool      // the traced processes' execs are followed (exec.go)
	tally    bool      // count in place, no records
	agg      bool      // aggregate in place (agg.go)
	multi    bool      // uprobe_multi links
	v4       bool      // signed division in the ISA
	rd       reads     // how programs read tracee memory
	stack    stackConf // -k: the user stack in each record (stack.go)
	// sys are the system call sites, strSize their -s (syscall.go).
	sys     []probe.Site
	strSize int
	fdPaths bool // -y: wake the reader at every call (syscall_user.go)
	proc    bool // Target.ProcessEvents (proc.go): filtered on the tgid map
}

// placement is one kernel probe: a spot of a site, with its program.
type placement struct {
	obj    string
	off    uint64
	cookie uint64 // the site's index
	uret   bool
	prog   int    // index in Spec.progs
	refCtr uint64 // file offset of the USDT semaphore (0: none)
}

// maxOpenCalls bounds the calls whose entry time is kept; the least
// recently entered are forgotten first (their returns get no duration).
const maxOpenCalls = 1 << 17

// newSpec generates the programs of sites, placed by plans (one per site),
// one program per distinct code: the sites of a glob usually share one,
// told apart by their attach cookie.
func newSpec(sites []probe.Site, plans []plan, c specConfig) (*Spec, error) {
	if c.ringSize == 0 {
		c.ringSize = defaultRingSize
	}
	cs := &ebpf.CollectionSpec{Maps: map[string]*ebpf.MapSpec{}, Programs: map[string]*ebpf.ProgramSpec{}}
	s := &Spec{CollectionSpec: cs, multi: c.multi, cfg: c, byCode: map[string]int{}}
	m := maps{events: mapEvents, stats: mapStats, wakeAt: c.ringSize / 4}
	cs.Maps[mapEvents] = &ebpf.MapSpec{Name: mapEvents, Type: ebpf.RingBuf, MaxEntries: uint32(c.ringSize)}
	cs.Maps[mapStats] = &ebpf.MapSpec{Name: mapStats, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: numStats}
	tallyRoom := len(sites)
	if c.follow || c.execs || len(c.sys) > 0 || c.proc {
		// System calls, process events and execs are seen system-wide:
		// their programs always filter.
		cs.Maps[mapTgids] = &ebpf.MapSpec{Name: mapTgids, Type: ebpf.Hash, KeySize: 4, ValueSize: 4, MaxEntries: 1 << 16}
	}
	if c.follow {
		m.tgids = mapTgids
	}
	if c.follow || c.execs {
		cs.Maps[mapExecs] = &ebpf.MapSpec{Name: mapExecs, Type: ebpf.RingBuf, MaxEntries: execRingSize}
		tallyRoom += execSiteRoom
	}
	if c.tally {
		m.tallies, m.hist = mapTallies, mapHist
		cs.Maps[mapTallies] = &ebpf.MapSpec{Name: mapTallies, Type: ebpf.Array, KeySize: 4, ValueSize: tallySize,
			MaxEntries: uint32(max(1, tallyRoom))}
		cs.Maps[mapHist] = &ebpf.MapSpec{Name: mapHist, Type: ebpf.Hash, KeySize: 8, ValueSize: 8, MaxEntries: maxHistBuckets}
	}
	if c.agg && !c.tally {
		s.aggs, s.aggWhy = aggSpecs(sites)
		s.aggIn = map[int]bool{}
		for _, site := range c.sys {
			if site.Spec.Agg != nil {
				// Another generator's programs (syscall_prog.go) decode
				// whole calls: the CLI aggregates their events.
				s.aggWhy[site.Spec.Text] = "a system call"
			}
		}
		zero := 0
		for _, l := range s.aggs {
			cs.Maps[l.mapName] = l.mapSpec()
			zero = max(zero, l.valueSize)
		}
		if zero > 0 {
			m.aggZero = mapAggZero
			cs.Maps[mapAggZero] = &ebpf.MapSpec{Name: mapAggZero, Type: ebpf.Array, KeySize: 4, ValueSize: uint32(zero), MaxEntries: 1}
		}
	}
	for i := range sites {
		if sites[i].Spec.Kind == probe.Return {
			m.times, m.armed = mapTimes, mapArmed
			cs.Maps[mapTimes] = &ebpf.MapSpec{Name: mapTimes, Type: ebpf.LRUHash, KeySize: keySize, ValueSize: timesValueSize, MaxEntries: maxOpenCalls}
			cs.Maps[mapArmed] = &ebpf.MapSpec{Name: mapArmed, Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1}
			break
		}
	}
	s.maps = m
	if err := s.addSites(sites, plans); err != nil {
		return nil, err
	}
	if len(c.sys) > 0 {
		var err error
		sm := m
		if c.fdPaths {
			// Each record wakes the reader, which reads the fds' paths
			// while the process most likely still has them open.
			sm.wakeAt = 0
		}
		if s.sys, err = newSysSpec(c.sys, c.strSize, sm, c.v4, c.stack); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// addSites generates the programs and placements of more sites, whose
// cookies follow those already in s. On error s is unchanged.
func (s *Spec) addSites(sites []probe.Site, plans []plan) error {
	c, m := s.cfg, s.maps
	if c.tally && len(s.layout)+len(sites) > int(s.Maps[mapTallies].MaxEntries) {
		return fmt.Errorf("%d more probe sites than the counters of -c have room for", len(sites))
	}
	var progs, probes []string
	var layout []*program
	var placed []placement
	byCode := map[string]int{}
	add := func(insns asm.Instructions, site *probe.Site) int {
		key := insns.String()
		if i, ok := s.byCode[key]; ok {
			return i
		}
		if i, ok := byCode[key]; ok {
			return i
		}
		i := len(s.progs) + len(progs)
		name := fmt.Sprintf("utap_p%d", i)
		ps := &ebpf.ProgramSpec{Name: "utap_probe", Type: ebpf.Kprobe, License: "GPL", Instructions: insns, Flags: c.rd.progFlags()}
		// Always a multi link when possible: closing a perf-link uprobe costs
		// ~0.16 s on 6.18 (BenchmarkAttach1000Perf), a multi link ~20 µs per site.
		if c.multi {
			ps.AttachType = ebpf.AttachTraceUprobeMulti
		}
		s.Programs[name] = ps
		progs = append(progs, name)
		probes = append(probes, site.Spec.Text)
		byCode[key] = i
		return i
	}
	fail := func(site *probe.Site, err error) error {
		for _, name := range progs {
			delete(s.Programs, name)
		}
		return fmt.Errorf("probe %s: %w", site.Spec.Text, err)
	}
	type fn struct {
		obj  string
		addr uint64
	}
	returns := map[fn]bool{} // functions with a return probe
	for i := range sites {
		if sites[i].Spec.Kind == probe.Return {
			returns[fn{sites[i].Object, sites[i].FuncAddr}] = true
		}
	}
	for i := range sites {
		site, pl := &sites[i], plans[i]
		armed := site.Spec.Kind == probe.Entry && returns[fn{site.Object, site.FuncAddr}]
		if site.Spec.Kind == probe.Return && m.times == "" {
			return fail(site, fmt.Errorf("%w: a return probe in a new image of a trace that had none", ErrUnsupported))
		}
		p, err := compile(site, m, config{kind: site.Spec.Kind, v4: c.v4, rd: c.rd, key: pl.key, tally: c.tally, agg: s.aggOf(site), stack: c.stack, armed: armed})
		if err != nil {
			return fail(site, err)
		}
		layout = append(layout, p)
		event := add(p.insns, site)
		for _, sp := range pl.spots {
			prog := event
			if sp.stamp {
				prog = add(compileStamp(m, pl.key), site)
			}
			cookie := uint64(len(s.layout) + i)
			placed = append(placed, placement{obj: site.Object, off: sp.off, cookie: cookie, uret: sp.uret, prog: prog, refCtr: sp.refCtr})
		}
	}
	s.progs = append(s.progs, progs...)
	s.probes = append(s.probes, probes...)
	s.layout = append(s.layout, layout...)
	s.placed = append(s.placed, placed...)
	for k, v := range byCode {
		s.byCode[k] = v
	}
	return nil
}
