//go:build linux && amd64

package ptrace

import (
	"errors"
	"fmt"
	"os"

	"github.com/utap/utap/elfsym"
	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/probe"
	"github.com/utap/utap/ssol"
)

// ErrNoPad: a site would keep its breakpoint (PadsAll).
var ErrNoPad = errors.New("keeps a breakpoint")

// PadsAll says, before anything runs, whether every site would take an
// in-process pad, from the files alone, as padPlan judges them (a trace
// with stacks of depth stackDepth): nil if so, else an error wrapping
// ErrNoPad naming the first site that would not and why. What only the
// running process tells (a thread inside the jump's bytes, the CET shadow
// stack, where an IFUNC resolves) may still leave a site a breakpoint.
func PadsAll(sites []probe.Site, stackDepth int, pids []int) error {
	// A pad reads memory by loads while utap lives, by system calls once
	// it is gone: under a seccomp filter (utap's own, which a command it
	// runs inherits, or a process's it attaches to) those calls could be
	// the process's death, so there reading sites keep breakpoints
	// (NoReads) and the kernel's uprobes, which read without either, win.
	readsOK := !seccompFiltered(os.Getpid())
	for _, pid := range pids {
		readsOK = readsOK && !seccompFiltered(pid)
	}
	if err := padsOK(); err != nil {
		return fmt.Errorf("%w: %v", ErrNoPad, err)
	}
	if len(sites) == 0 {
		return fmt.Errorf("%w: no probe site", ErrNoPad)
	}
	// An entry and its return probe share the address: the return
	// rides on the entry's pad (retWanted).
	type count struct{ entries, returns int }
	at := map[[2]any]*count{}
	for i := range sites {
		k := [2]any{sites[i].Object, sites[i].Addr}
		if at[k] == nil {
			at[k] = &count{}
		}
		if sites[i].Spec != nil && sites[i].Spec.Kind == probe.Return {
			at[k].returns++
		} else {
			at[k].entries++
		}
	}
	if why, shared := ifuncShared(sites); shared {
		return fmt.Errorf("%w: %s", ErrNoPad, why)
	}
	for i := range sites {
		s := &sites[i]
		c := at[[2]any{s.Object, s.Addr}]
		why := ""
		if s.Spec != nil && s.Spec.Kind == probe.Return && !s.Syscall {
			why = staticReturnWhy(s)
			if why == "" {
				why = staticWhy(s, stackDepth, readsOK)
			}
		} else {
			why = staticWhy(s, stackDepth, readsOK)
		}
		if why == "" && (c.entries > 1 || c.returns > 1) {
			why = "several probes at one address"
		}
		if why != "" {
			return fmt.Errorf("%w: %s: %s", ErrNoPad, siteName(s), why)
		}
	}
	return nil
}

// PadsAvailable says whether pads can run here at all (the CPU and the
// kernel let a program name its thread): nil when they can.
func PadsAvailable() error { return padsOK() }

// staticWhy is why s would keep its breakpoint, "" if it takes a pad.
func staticWhy(s *probe.Site, stackDepth int, readsOK bool) string {
	switch {
	case s.Syscall:
		return "a system call probe"
	case s.USDT:
		return "a static probe (inside a function)"
	case s.IFunc:
		return ifuncWhy(s, stackDepth, readsOK)
	case stackDepth > 0:
		return "a stack is asked for (-k)"
	case s.GoFunc || s.ABI == probe.ABIGoRegs:
		return "a Go function"
	case s.FuncSize == 0 || s.Addr != s.FuncAddr:
		return "not a function's entry"
	}
	sp, err := compileSite(s)
	switch {
	case err != nil:
		return err.Error()
	case sp.ref:
		return "an expression only the reference evaluator takes"
	}
	if why := sp.layoutWhy(); why != "" {
		return why
	}
	lay, _ := sp.layout()
	ps := pad.Spec{Addr: s.Addr, ABI: s.ABI, Cond: sp.cond, Records: pad.DefaultRecords}
	lay.spec(&ps)
	if s.Spec != nil && s.Spec.Kind == probe.Return {
		ps.Kind = pad.KindReturn // its return pad's programs
	}
	if err := pad.Check(ps); err != nil {
		return err.Error()
	}
	if pad.Reads(ps) && !readsOK {
		return "a memory read in a process under a seccomp filter"
	}
	code, err := elfsym.Code(s.Object, s.FuncAddr, s.FuncSize)
	if err != nil {
		return err.Error()
	}
	land, err := elfsym.ObjectLandings(s.Object)
	if err != nil {
		return err.Error()
	}
	if _, err := ssol.PlanEntry(code, s.FuncAddr, landingsBusy(land, 0, nil), FileBefore(s.Object, s.FuncAddr, land)); err != nil {
		return err.Error()
	}
	return ""
}

// staticReturnWhy is why return probe s would keep its breakpoint ("" if
// its return takes a pad, beside its entry probe's pad or in a pad that
// only hijacks), as retWanted judges it.
func staticReturnWhy(s *probe.Site) string {
	sp, err := compileSite(s)
	if err != nil {
		return err.Error()
	}
	return returnProgWhy(sp)
}

// FileBefore reads, for a hop (ssol.PlanEntry), an object's code before
// the function at fnAddr from the landing before it.
func FileBefore(object string, fnAddr uint64, land *elfsym.Landings) func() (ssol.Before, error) {
	return hopBefore(land, fnAddr, 0, func(from, n uint64) ([]byte, error) { return elfsym.Code(object, from, n) })
}

// hopBefore reads, for a hop, the code before the function at link-time
// fnAddr from the landing before it (read takes link-time addresses), as
// it lies at bias (runtime minus link-time).
func hopBefore(land *elfsym.Landings, fnAddr, bias uint64, read func(from, n uint64) ([]byte, error)) func() (ssol.Before, error) {
	return func() (ssol.Before, error) {
		from, ok := land.Before(fnAddr - 1)
		if !ok || fnAddr-from > maxHopScan {
			return ssol.Before{}, fmt.Errorf("no landing close before %#x", fnAddr)
		}
		code, err := read(from, fnAddr-from)
		return ssol.Before{Code: code, At: from + bias, Lands: func(a uint64) bool { return land.Has(a - bias) }}, err
	}
}

// ifuncWhy is staticWhy for an IFUNC's site: every implementation its
// resolver may pick (elfsym.IFuncImpls) must take a pad.
func ifuncWhy(s *probe.Site, stackDepth int, readsOK bool) string {
	impls, ok := elfsym.IFuncImpls(s.Object, s.FuncAddr, s.FuncSize)
	if !ok || s.Addr != s.FuncAddr {
		return "an IFUNC (the implementation the loader picks decides)"
	}
	for _, im := range impls {
		c := *s
		c.IFunc, c.Addr, c.FuncAddr, c.FuncSize = false, im.Addr, im.Addr, im.Size
		if why := staticWhy(&c, stackDepth, readsOK); why != "" {
			return fmt.Sprintf("an IFUNC whose implementation %s would keep a breakpoint: %s", im.Name, why)
		}
	}
	return ""
}

// ifuncShared says whether two IFUNC sites of different specs may
// resolve to one implementation (memcpy and memmove do): two probes at
// one address, which no pad holds. A pattern's do not: its aliases make
// one site (elfsym).
func ifuncShared(sites []probe.Site) (string, bool) {
	type key struct {
		impl uint64
		ret  bool // an entry and its return share an address
	}
	owner := map[key]*probe.Site{}
	for i := range sites {
		s := &sites[i]
		if !s.IFunc {
			continue
		}
		ret := s.Spec != nil && s.Spec.Kind == probe.Return
		impls, _ := elfsym.IFuncImpls(s.Object, s.FuncAddr, s.FuncSize)
		for _, im := range impls {
			k := key{im.Addr, ret}
			if o := owner[k]; o != nil && o.FuncAddr != s.FuncAddr && o.Spec != s.Spec {
				return fmt.Sprintf("%s and %s may resolve to one implementation, %s: several probes at one address", o.Func, s.Func, im.Name), true
			}
			owner[k] = s
		}
	}
	return "", false
}
