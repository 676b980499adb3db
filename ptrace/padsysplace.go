//go:build linux && amd64

package ptrace

import (
	"debug/elf"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/internal/syscalls"
	"github.com/utap/utap/probe"
	"github.com/utap/utap/ptrace/pads"
	"github.com/utap/utap/ssol"
)

// stopCalls keep their stops (first cut): the clone family and vfork
// (the child returns on another stack), execve (a new image), the
// calls that do not return, and rt_sigreturn.
var stopCalls = map[int]bool{
	unix.SYS_CLONE: true, unix.SYS_CLONE3: true, unix.SYS_FORK: true, unix.SYS_VFORK: true,
	unix.SYS_EXECVE: true, unix.SYS_EXECVEAT: true, unix.SYS_RT_SIGRETURN: true,
	unix.SYS_EXIT: true, unix.SYS_EXIT_GROUP: true,
}

// direntRoom is the bytes of a getdents buffer a pad's record holds, with
// the count of the records past them (pad.SysCap.DirentCount).
const direntRoom = pad.SysSpace - pad.SysHead - 8 - 16

// sysCaps is how a pad reads the captures of nr, after the call; why
// says why the call keeps its stops instead.
func sysCaps(nr int, strsize int) (caps []pad.SysCap, why string) {
	info := syscalls.Lookup(nr)
	switch {
	case info == nil:
		return nil, "a call utap does not decode"
	case stopCalls[nr] || info.NoReturn:
		return nil, "a call that keeps its stops (clone, fork, exec, exit, rt_sigreturn)"
	}
	dirents := syscalls.DirentCapture(nr)
	if dirents >= 0 && !info.Captures[dirents].Counted {
		dirents = -1 // every entry shown: the whole buffer, more than a record holds
	}
	exitArg := map[int]bool{}
	for _, c := range info.Captures {
		if c.Exit {
			exitArg[c.Arg] = true
		}
	}
	for k, c := range info.Captures {
		if j := slices.Index(info.Captures[:k], c); j >= 0 {
			caps = append(caps, pad.SysCap{Arg: c.Arg, Exit: c.Exit, Same: j + 1}) // the same bytes, read once
			continue
		}
		switch {
		case c.SP || c.StrArray || c.CountOnly:
			return nil, "memory the pad does not read (arrays of strings, the stack)"
		case c.Indirect:
			caps = append(caps, pad.SysCap{Arg: c.Arg, Exit: c.Exit, Indirect: true, Off: c.Off, Size: c.Size,
				LenArg: -1, Max: max(c.Size, 8)})
			continue
		case !c.Exit && exitArg[c.Arg] && (c.Iov || c.Msg || c.LenRet):
			return nil, "memory read before the call that the call changes"
		case c.Msg:
			lim := syscalls.MaxFor(c, strsize)
			caps = append(caps, pad.SysCap{Arg: c.Arg, Exit: c.Exit, LenRet: c.LenRet, Msg: true,
				IovLim: lim, Max: pad.MsgRoom(lim)})
			continue
		case c.Iov && c.LenArg >= 0:
			lim := syscalls.MaxFor(c, strsize)
			caps = append(caps, pad.SysCap{Arg: c.Arg, Exit: c.Exit, LenArg: c.LenArg, LenRet: c.LenRet,
				Iov: true, IovLim: lim, Max: pad.IovRoom(lim)})
			continue
		case c.Iov:
			return nil, "an iovec array of no known length"
		case !c.Str && c.Size == 0 && c.LenArg < 0 && !c.LenRet:
			return nil, "memory of a size the pad does not know"
		}
		room := syscalls.MaxFor(c, strsize)
		if k == dirents {
			room = min(room, direntRoom)
		}
		// Bytes the call may change are read before it (pad.SysCap.Before).
		caps = append(caps, pad.SysCap{Arg: c.Arg, Exit: c.Exit, Str: c.Str, Size: c.Size,
			LenArg: c.LenArg, LenRet: c.LenRet, Elem: c.Elem, Max: room,
			Before: !c.Exit && exitArg[c.Arg]})
	}
	if dirents >= 0 {
		// The records past what the record holds are counted.
		caps = append(caps, pad.SysCap{Arg: info.Captures[dirents].Arg, Exit: true, LenArg: -1, DirentCount: true, Max: 8})
	}
	if _, _, ok := pad.SysLayout(caps); !ok {
		return nil, "its memory does not fit a record"
	}
	if _, size := pad.BeforeLayout(caps); size > pad.MaxBefore {
		return nil, "memory read before the call that the call changes, more than a pad reads there"
	}
	return caps, ""
}

// sysSiteOf is the probe a call's pad reports for: the plain selection
// (-S, -e trace=); nil when a probe of the call has a condition or
// values (the stop path evaluates those).
func (sy *sysTrace) sysSiteOf(nr int) (*probe.Site, string) {
	var plain *probe.Site
	for _, s := range sy.byNr[nr] {
		if !syscalls.Plain(s) {
			return nil, "a probe with a condition or values"
		}
		if plain == nil {
			plain = s
		}
	}
	if plain == nil {
		return nil, "not probed"
	}
	return plain, ""
}

// sysScan is the placing of one process's system call pads and traps;
// its threads are all stopped, th the one that runs injected calls.
type sysScan struct {
	pd *padEngine
	p  *process
	th *thread
	sp *sysPads
	// rips: where each stopped thread resumes, read once a placement
	// (sysInFlight asks for every site).
	rips []threadRip
}

// threadRip is where stopped thread tid resumes.
type threadRip struct {
	tid int
	rip uint64
}

// stoppedRips is where p's stopped threads resume.
func stoppedRips(p *process) []threadRip {
	var rips []threadRip
	for _, t := range p.threads {
		var regs unix.PtraceRegs
		if t.stopped && proc.GetRegs(t.tid, &regs) == nil {
			rips = append(rips, threadRip{t.tid, regs.Rip})
		}
	}
	return rips
}

// sysPlanned is a site whose pad is planned.
type sysPlanned struct {
	s    *sysSite
	d    *ssol.Displaced
	site *probe.Site
	caps []pad.SysCap
}

// object finds, plans and writes the pads of one object's probed
// `syscall` instructions, then the traps (padsystrap.go). It says why
// when the object's calls cannot all be seen.
func (sc sysScan) object(o object, ms []mapping) string {
	pd, p, sp := sc.pd, sc.p, sc.sp
	tr := pd.tr
	sy := tr.sys
	fs, err := scanFile(o.path)
	if errors.As(err, new(errLandings)) {
		pd.say(fmt.Sprintf("%s: system calls stop: finding where its code jumps: %v", o.path, err))
		return fmt.Sprintf("%s: finding where its code jumps: %v", o.path, err)
	}
	if err != nil {
		return fmt.Sprintf("%s: %v", o.path, err)
	}
	name := filepath.Base(o.path)
	var todo []sysPlanned
	var traps []sysTrap
	for _, seg := range fs.segs {
		bias, ok := segmentBias(ms, o, &seg.prog)
		if !ok {
			continue
		}
		for i := range seg.sites {
			fsc := &seg.sites[i]
			v, from, nr := fsc.v, fsc.from, fsc.nr
			if sy.trapWanted(nr) {
				traps = append(traps, sysTrap{sc: v + bias, nr: nr})
			}
			if !fsc.known {
				if d := sc.planDispatch(fsc, bias); d != nil {
					todo = append(todo, sysPlanned{s: d, d: d.disp})
				}
				continue
			}
			if len(sy.byNr[nr]) == 0 {
				if w := sc.planWatch(from, v, bias, nr); w != nil {
					todo = append(todo, sysPlanned{s: w, d: w.disp})
				}
				continue // not probed: it runs as it is
			}
			site, caps, why := sy.padCaps(nr)
			if why == "" {
				why = fsc.movable() // the file's instructions first: why they cannot move
			}
			var rd *ssol.Displaced
			if why == "" {
				rd, why = sc.planAt(from+bias, v+bias, false)
			}
			if why != "" {
				pd.sayf("%s at %s+%#x: stops: %s", syscalls.Lookup(nr).Name, name, v, why)
				continue
			}
			todo = append(todo, sysPlanned{s: sysSiteAt(rd, v+bias, nr, false), d: rd, site: site, caps: caps})
		}
	}
	if len(todo) > 0 {
		sc.padsWrite(o, todo)
	}
	kind := map[uint64]int{} // 1: a pad, 2: a dispatch pad, 3: a watch pad
	for _, t := range todo {
		switch {
		case t.s.pad == 0:
		case !t.s.dispatch:
			kind[t.s.sc] = 1
		case t.s.nr < 0:
			kind[t.s.sc] = 2
		default:
			kind[t.s.sc] = 3
		}
	}
	if at, err := (sysTraps{tr}).addAll(p, sp, traps); err != nil {
		return fmt.Sprintf("the syscall at %#x (%s): %v", at, name, err)
	}
	var n [4]int
	for _, t := range traps {
		n[kind[t.sc]]++
	}
	if len(traps) > 0 {
		pd.say(fmt.Sprintf("%s: %d syscall instructions trapped: %d whose calls stop there, %d behind a dispatch pad "+
			"(a number not set before them), %d behind a watch pad, %d behind a pad (the trap takes a call "+
			"restarted there)", name, len(traps), n[0], n[2], n[3], n[1]))
	}
	return ""
}

// padCaps is the probe a pad of nr reports for and the captures it
// reads; why says why the call keeps its stops instead.
func (sy *sysTrace) padCaps(nr int) (*probe.Site, []pad.SysCap, string) {
	site, why := sy.sysSiteOf(nr)
	if why != "" {
		return nil, nil, why
	}
	caps, why := sy.sysCapsFor(nr)
	return site, caps, why
}

// planAt plans the displaced instructions of the `syscall` at `at` from
// p's memory (its code from the landing `from`, runtime addresses); any:
// its number may be set elsewhere. why says why it takes no pad.
func (sc sysScan) planAt(from, at uint64, any bool) (*ssol.Displaced, string) {
	code := mustRead(sc.p, from, at+2-from)
	var rd *ssol.Displaced
	var err error
	if any {
		rd, _, err = ssol.PlanSyscallAny(code, from, at)
	} else {
		rd, _, err = ssol.PlanSyscall(code, from, at, nil)
	}
	if err != nil {
		return nil, fmt.Sprintf("its code in memory is not the file's (%v)", err)
	}
	if why := sysInFlight(sc.rips, rd.Addr, at); why != "" {
		return nil, why
	}
	return rd, ""
}

// sysSiteAt is the site of the `syscall` at sc whose displaced
// instructions rd are (a dispatch or watch pad's with dispatch).
func sysSiteAt(rd *ssol.Displaced, sc uint64, nr int, dispatch bool) *sysSite {
	return &sysSite{first: rd.Addr, sc: sc, nr: nr, branches: rd.Branches, disp: rd, dispatch: dispatch}
}

// recordCode assembles the system call pad of s at s.padAt, for probe
// site: its call's captures caps, its displaced instructions from disp;
// id is its record site's.
func (sc sysScan) recordCode(s *sysSite, site *probe.Site, caps []pad.SysCap, disp func(uint64) ([]byte, error), ring uint64, n int) ([]byte, pad.SysParts, uint32, error) {
	tr := sc.pd.tr
	id := sc.pd.d.SiteIDs(sysKey{site, s.nr}, func() []*pads.Site {
		return []*pads.Site{pads.NewSysSite(site, s.nr, caps, len(syscalls.Lookup(s.nr).Captures), tr.target.FdPaths, tr.sys.strsize)}
	})
	spec := pad.Spec{ID: id, Addr: s.sc, Ring: ring, Records: n, Kind: pad.KindSys, Sync: sc.pd.sync,
		Displaced: disp, Sys: &pad.SysSpec{Caps: caps, Back: s.sc + 2, Nr: s.nr}}
	code, parts, err := pad.BuildSys(spec, s.padAt)
	return code, parts, id, err
}

// at records where s's code, assembled for s.padAt, has its parts.
func (s *sysSite) at(code []byte, parts pad.SysParts) {
	s.pad, s.padLen, s.tsc = s.padAt+uint64(parts.Syscall), len(code), s.padAt+uint64(parts.TSC)
}

// take moves the gate's next free byte past code written there.
func (sp *sysPads) take(code []byte) { sp.next += uint64(len(code)+15) &^ 15 }

// recordSite gives the drainer where s's system call pad, of record
// site id, makes its call, and the pads' table its fix-ups.
func (sc sysScan) recordSite(s *sysSite, id uint32, parts pad.SysParts) {
	s.id = id
	sc.p.pads.addFixups(s.padAt, parts.Fixups)
	sc.pd.d.SysPad(s.pad, id)
	sc.pd.tr.stats.pads++
}

// sysCapsFor is sysCaps, with the calls the traps watch kept on their
// stops: made from the gate, a filter would let them through unseen.
func (sy *sysTrace) sysCapsFor(nr int) ([]pad.SysCap, string) {
	if trapWatched[nr] {
		return nil, "a call that may install a seccomp filter or make code"
	}
	return sysCaps(nr, sy.strsize)
}

// String names s's system call and address, as -v's lines do (sayf
// formats it only for them).
func (s *sysSite) String() string {
	if s.nr >= 0 {
		return fmt.Sprintf("%s at %#x", syscalls.Lookup(s.nr).Name, s.sc)
	}
	return fmt.Sprintf("syscall at %#x", s.sc)
}

// padsWrite writes the planned pads of o.
func (sc sysScan) padsWrite(o object, todo []sysPlanned) {
	pd, p, th, sp := sc.pd, sc.p, sc.th, sc.sp
	tr := pd.tr
	sy := tr.sys
	stubs := uint64(16 * len(todo))
	stubArea, err := tr.mapArea(p, th, todo[0].s.first, todo[len(todo)-1].s.first, pageRound(stubs))
	if err != nil {
		pd.say(fmt.Sprintf("%s: system calls stop: %v", o.path, err))
		return
	}
	p.pads.areas = append(p.pads.areas, area{start: stubArea, size: pageRound(stubs)})
	ring, n := p.padRing()
	// The pads and their stubs are written in runs, then each site's jump
	// (padsyswrite.go).
	var codes, stubRuns writeRuns
	built := make([]sysBuilt, 0, len(todo))
	for k, t := range todo {
		s := t.s
		s.stub = stubArea + uint64(16*k)
		s.padAt = sy.gate.addr + sp.next
		code, parts, id, err := sc.build(t, ring, n)
		if err == nil && sp.next+uint64(len(code)) > sy.gate.size {
			err = fmt.Errorf("the gate is full")
		}
		var jmp []byte
		if err == nil {
			jmp, err = t.d.Jump(s.stub)
		}
		if err == nil {
			s.orig, err = sc.origOf(s, t.d)
		}
		if err != nil {
			pd.sayf("%s: stops: %v", s, err)
			continue
		}
		for len(jmp) < len(s.orig) {
			jmp = append(jmp, 0xcc) // never run: nothing lands inside
		}
		s.at(code, parts)
		codes.add(s.padAt, code)
		stubRuns.add(s.stub, pad.AbsJmp(nil, s.padAt))
		sp.take(code)
		built = append(built, sysBuilt{s: s, jmp: jmp, id: id, parts: parts})
	}
	if err := codes.write(p.mem); err != nil {
		pd.say(fmt.Sprintf("%s: system calls stop: writing their pads: %v", o.path, err))
		return
	}
	if err := stubRuns.write(p.mem); err != nil {
		pd.say(fmt.Sprintf("%s: system calls stop: writing their pads' stubs: %v", o.path, err))
		return
	}
	for _, b := range built {
		s := b.s
		if err := p.mem.WriteAt(b.jmp, s.first); err != nil {
			pd.sayf("%s: stops: %v", s, err)
			continue
		}
		sp.sites[s.pad] = s
		if s.dispatch && s.nr >= 0 {
			pd.sayf("%s: a watch pad at %#x: made in-process, unless it may make code or install a "+
				"seccomp filter (then its trap) (%d bytes displaced)", s, s.padAt, len(s.orig))
			continue
		}
		if s.dispatch {
			pd.sayf("%s: a dispatch pad at %#x: the calls not probed run in-process, the probed go to pads of their own or stop "+
				"at its trap (%d bytes displaced)", s, s.padAt, len(s.orig))
			continue
		}
		sc.recordSite(s, b.id, b.parts)
		pd.sayf("%s: in-process, pad at %#x (%d bytes displaced)", s, s.padAt, len(s.orig))
	}
}

// build assembles t's pad at t.s.padAt: a system call pad, its id
// taken, or a dispatch pad (internal/pad/dispatch.go).
func (sc sysScan) build(t sysPlanned, ring uint64, n int) ([]byte, pad.SysParts, uint32, error) {
	s := t.s
	if s.dispatch && s.nr >= 0 {
		return sc.buildWatch(t)
	}
	if s.dispatch {
		to := sc.dispatchPads(s, ring, n)
		s.padAt = sc.pd.tr.sys.gate.addr + sc.sp.next // after those pads
		rel, err := t.d.Relocated(s.padAt)
		if err != nil {
			return nil, pad.SysParts{}, 0, err
		}
		nrs, _ := sc.pd.tr.sys.dispatchNrs()
		code, dp, err := pad.BuildDispatch(rel, s.padAt, nrs, to, s.sc)
		return code, pad.SysParts{TSC: dp.Compare, Syscall: dp.Syscall}, 0, err
	}
	return sc.recordCode(s, t.site, t.caps, t.d.Relocated, ring, n)
}

// segmentBias is runtime minus link-time address for prog of o, from
// the mapping of its file offset.
func segmentBias(ms []mapping, o object, prog *elf.ProgHeader) (uint64, bool) {
	for _, m := range ms {
		if m.Path != o.path || m.Inode != o.inode || !m.Exec() {
			continue
		}
		if prog.Off >= m.Offset && prog.Off < m.Offset+(m.End-m.Start) {
			return m.Start + (prog.Off - m.Offset) - prog.Vaddr, true
		}
	}
	return 0, false
}

// mustRead reads n bytes of p at addr (nil on a failure: the plan fails).
func mustRead(p *process, addr, n uint64) []byte {
	b := make([]byte, n)
	if p.mem.ReadByMem(b, addr) != nil {
		return nil
	}
	return b
}

// sysInFlight refuses a site where a stopped thread would resume inside
// the bytes the jmp takes (after their first, before the `syscall`).
func sysInFlight(rips []threadRip, first, sc uint64) string {
	for _, t := range rips {
		if t.rip > first && t.rip < sc {
			return fmt.Sprintf("thread %d will resume inside the bytes the jump takes", t.tid)
		}
	}
	return ""
}
