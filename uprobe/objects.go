//go:build linux && amd64

package uprobe

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// kernelObjs are the maps and programs of one trace, loaded from a Spec: the
// probe programs (indexed as Spec.progs, which placements refer to) and
// the hand-written ones (fork tracker, process events), kept apart so that
// the indices hold. The links that run them are the attacher's.
type kernelObjs struct {
	spec *Spec

	events, stats, tgids, times *ebpf.Map
	execs                       *ebpf.Map            // with Follow (exec.go)
	armed                       *ebpf.Map            // see returns.go
	tallies, hist               *ebpf.Map            // counting in place
	aggs                        map[string]*ebpf.Map // aggregating in place, by name (agg.go)
	progs                       []*ebpf.Program      // Spec.progs, loaded
	other                       []*ebpf.Program      // fork tracker, process events
}

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

// loadObjects creates spec's maps and loads its programs. On error
// whatever was created is released.
func loadObjects(spec *Spec) (*kernelObjs, error) {
	o := &kernelObjs{spec: spec}
	for _, name := range []string{mapEvents, mapStats, mapTgids, mapTimes, mapArmed, mapTallies, mapHist, mapExecs} {
		ms := spec.Maps[name]
		if ms == nil {
			continue
		}
		m, err := ebpf.NewMap(ms)
		if err != nil {
			o.close()
			what := mapErrors[name]
			if name == mapEvents {
				what = fmt.Sprintf(what, ms.MaxEntries)
			}
			return nil, fmt.Errorf("%s: %w", what, hint(err))
		}
		*o.mapNamed(name) = m
	}
	for name, ms := range spec.Maps {
		if !strings.HasPrefix(name, mapAggPrefix) {
			continue
		}
		m, err := ebpf.NewMap(ms)
		if err != nil {
			o.close()
			return nil, fmt.Errorf("creating the aggregation map %s: %w", name, hint(err))
		}
		if o.aggs == nil {
			o.aggs = map[string]*ebpf.Map{}
		}
		o.aggs[name] = m
	}
	if err := o.loadProgs(); err != nil {
		o.close()
		return nil, err
	}
	return o, nil
}

// loadProgs loads the Spec's programs not loaded yet.
func (o *kernelObjs) loadProgs() error {
	s := o.spec
	for i := len(o.progs); i < len(s.progs); i++ {
		ps := s.Programs[s.progs[i]].Copy()
		for ref := range s.Maps {
			// Fails only for a map this program does not use.
			m := o.aggs[ref]
			if m == nil {
				m = *o.mapNamed(ref)
			}
			ps.Instructions.AssociateMap(ref, m)
		}
		prog, err := ebpf.NewProgram(ps)
		if err != nil {
			return fmt.Errorf("loading the program of probe %s: %w", s.probes[i], verifierReason(err))
		}
		o.progs = append(o.progs, prog)
	}
	return nil
}

// keep holds a hand-written program until close.
func (o *kernelObjs) keep(p *ebpf.Program) { o.other = append(o.other, p) }

// mapNamed is where the map of that name is kept.
func (o *kernelObjs) mapNamed(name string) **ebpf.Map {
	switch name {
	case mapEvents:
		return &o.events
	case mapStats:
		return &o.stats
	case mapTgids:
		return &o.tgids
	case mapTimes:
		return &o.times
	case mapArmed:
		return &o.armed
	case mapTallies:
		return &o.tallies
	case mapExecs:
		return &o.execs
	}
	return &o.hist
}

// readStats sums the programs' counters over CPUs.
func (o *kernelObjs) readStats() (st stats) {
	if o.stats == nil {
		return st
	}
	for i := range st {
		var per []uint64
		if e := o.stats.Lookup(uint32(i), &per); e == nil {
			for _, n := range per {
				st[i] += n
			}
		}
	}
	return st
}

// close releases every program and map; the links must be gone.
func (o *kernelObjs) close() {
	for _, p := range append(o.progs, o.other...) {
		p.Close()
	}
	for _, m := range []*ebpf.Map{o.events, o.stats, o.tgids, o.times, o.armed, o.tallies, o.hist, o.execs} {
		if m != nil {
			m.Close()
		}
	}
	for _, m := range o.aggs {
		m.Close()
	}
}

// stats are the programs' counters, summed over CPUs.
type stats [numStats]uint64

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
