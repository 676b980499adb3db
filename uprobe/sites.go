//go:build linux && amd64

package uprobe

import (
	"sync"

	"github.com/utap/utap/probe"
)

// siteTable is the probe sites of a trace and their record layouts
// (Spec.layout), indexed by attach cookie. A followed exec extends both
// (exec.go) while the ring reader decodes with them, hence the lock.
type siteTable struct {
	mu    sync.Mutex
	spec  *Spec
	sites []probe.Site
	stk   *stackDecoder // -k
}

// decode turns a probe's record into ev.
func (t *siteTable) decode(raw []byte, ev *probe.Event) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return decode(raw, t.sites, t.spec.layout, t.stk, ev)
}

// add generates the programs of more sites into the Spec.
func (t *siteTable) add(sites []probe.Site, plans []plan) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.spec.addSites(sites, plans); err != nil {
		return err
	}
	t.sites = append(t.sites, sites...)
	return nil
}

// site is the site of an attach cookie. Only the goroutine that adds
// sites calls it while sites may be added.
func (t *siteTable) site(cookie uint64) *probe.Site { return &t.sites[cookie] }
