//go:build linux && amd64

package uprobe

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cilium/ebpf/link"
	"github.com/utap/utap/probe"
)

// attacher owns every link of a trace: the probes it places and those
// handed to it (tracepoints, fork tracker). Links are kept referenced
// because a collected link detaches.
type attacher struct {
	objs  *kernelObjs
	multi bool                            // uprobe_multi links
	site  func(cookie uint64) *probe.Site // names a refused probe
	links []link.Link
}

// keep holds l until detach.
func (a *attacher) keep(l link.Link) { a.links = append(a.links, l) }

// attach places the probes of placed, filtered on each of pids (0: every
// process, the programs then filter on the tgid map).
func (a *attacher) attach(placed []placement, pids []int) error {
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
		prog := a.objs.progs[g.prog]
		for _, pid := range pids {
			if a.multi {
				opts := &link.UprobeMultiOptions{Addresses: g.offs, Cookies: g.cooks, RefCtrOffsets: g.refs, PID: uint32(pid)}
				attach := ex.UprobeMulti
				if g.uret {
					attach = ex.UretprobeMulti
				}
				l, err := attach(nil, prog, opts)
				if err != nil {
					return a.whichRefused(g.obj, g.offs, g.cooks, func(off, cookie uint64) error {
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
				a.keep(l)
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
					return a.refusedAt(g.obj, off, g.cooks[j], err)
				}
				a.keep(l)
			}
		}
	}
	return a.arm(true)
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
func (a *attacher) whichRefused(obj string, offs, cookies []uint64, try func(off, cookie uint64) error, err error) error {
	for i, off := range offs {
		if e := try(off, cookies[i]); e != nil {
			return a.refusedAt(obj, off, cookies[i], e)
		}
	}
	return fmt.Errorf("attaching %d probes to %s: %w", len(offs), obj, hint(err))
}

// refusedAt is the error of the probe the kernel refused at file offset off
// of obj: its spec, function and offset, and instruction bytes.
func (a *attacher) refusedAt(obj string, off, cookie uint64, err error) error {
	site := a.site(cookie)
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
func (a *attacher) arm(on bool) error {
	if a.objs.armed == nil {
		return nil
	}
	v := uint32(0)
	if on {
		v = 1
	}
	if err := a.objs.armed.Put(uint32(0), v); err != nil {
		return fmt.Errorf("arming the return probes: %w", err)
	}
	return nil
}

// detach closes every link; no probe fires afterwards.
func (a *attacher) detach() error {
	var errs []error
	for _, l := range a.links {
		if err := l.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	a.links = nil
	return errors.Join(errs...)
}
