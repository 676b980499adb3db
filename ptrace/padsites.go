//go:build linux && amd64

package ptrace

import (
	"github.com/utap/utap/probe"
	"github.com/utap/utap/ptrace/pads"
)

// Record site ids are kept per pad kind and place (pads.Drainer.SiteIDs):
// a pad in the same file at the same place for the same probes writes
// the same ids in every process image.

// padKey is what a function pad's record sites stand for.
type padKey struct {
	obj        object
	name       string
	addr       uint64 // the probed instruction, link-time
	probe, ret int    // the probe's index, its return probe's (-1: none)
	kind       uint8  // 0 a probe's, 1 an unwinder's restore, 2 a sync point, 3 a trap, 4 a hijack alone
}

// sysKey is what a system call pad's record site stands for: its call's
// pads for one probe, wherever they are.
type sysKey struct {
	site *probe.Site
	nr   int
}

func padKeyOf(ps *padSite) padKey {
	k := padKey{obj: ps.obj, name: ps.name, probe: -1, ret: -1}
	switch {
	case ps.restore:
		k.kind = 1
	case ps.syncPoint:
		k.kind = 2
	case ps.trap:
		k.kind = 3
	case ps.hijackOnly:
		k.kind = 4
	}
	if ps.sp != nil && ps.sp.site != nil {
		k.addr, k.probe = ps.sp.site.Addr, ps.sp.site.Probe
	}
	if rs := retProg(ps); rs != nil {
		k.ret = rs.site.Probe
	}
	return k
}

// retProg is the return probe whose pad ps's hijacks to, nil if none.
func retProg(ps *padSite) *siteProg {
	if ps.bp == nil || ps.bp.hijack == nil {
		return nil
	}
	return ps.bp.hijack.sites[0]
}

// recordSites are the sites ps's records are of: its own, then its
// return pad's if it hijacks (id+1: pad.Spec's for the return).
func recordSites(ps *padSite) []*pads.Site {
	if ps.restore || ps.syncPoint || ps.trap {
		return []*pads.Site{noRecordSite(ps)}
	}
	lay, _ := ps.sp.layout() // wanted checked it
	s := pads.NewSite(ps.sp.site, ps.sp.fetches)
	s.Where = lay.where
	sites := []*pads.Site{s}
	if rs := retProg(ps); rs != nil {
		lay, _ := rs.layout()
		r := pads.NewSite(rs.site, rs.fetches)
		r.Return, r.Where = true, lay.where
		sites = append(sites, r)
	}
	return sites
}
