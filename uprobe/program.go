//go:build linux && amd64

package uprobe

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/utap/utap/probe"
)

// Record layout, shared by every program and the decoder: a header, then
// one slot per fetch.
//
//	0  u64 attach cookie (index of the site)
//	8  u64 tgid<<32 | tid
//	16 u64 bpf_ktime_get_ns
//	24 return probes only: u64 rax, u64 duration in ns (0: entry unseen)
//	   fetch slots: integer = u64 value, u64 fault flag;
//	   string = s64 string-read result, then the bytes.
const (
	hdrSize     = 24
	retHdrSize  = hdrSize + 16
	intSlotSize = 16
	strSlotSize = 8 + probe.MaxStrLen + 8 // read size MaxStrLen+1, 8-aligned
)

// field is where one fetch lands in a record.
type field struct {
	off  int
	kind fieldKind
	lit  string // fieldLit: a string literal, never sent by the kernel
}

type fieldKind uint8

const (
	fieldInt fieldKind = iota
	fieldStr
	fieldLit
	fieldBuf // a sized string (StrOf.Len): that many bytes, NULs included
)

// maps are the names of the maps a program refers to, "" for a map the
// trace has none of: instructions reference maps by name, resolved to the
// kernel's objects only when a Spec is loaded.
type maps struct {
	events string // BPF_MAP_TYPE_RINGBUF
	stats  string // per-CPU u64 counters, indexed by the stat* constants
	tgids  string // hash of traced tgids; none when links filter by PID
	times  string // return probes: LRU hash of call key → entry time and arguments
	armed  string // return probes: u32 array, nonzero while every link is in
	wakeAt int    // bytes of unread records that wake the reader

	tallies, hist string // counting in place (tally.go)
	aggZero       string // aggregating in place: a zeroed value (agg.go)
}

// mapPtr loads the address of the map named name into dst.
func mapPtr(dst asm.Register, name string) asm.Instruction {
	return asm.LoadMapPtr(dst, 0).WithReference(name)
}

// Counters of the stats map.
const (
	statLost      = iota // records the ring had no room for
	statEntered          // calls whose entry time was recorded
	statReturned         // returns that found their entry time
	statUnentered        // returns without an entry time (duration 0)
	statUncounted        // durations the histogram map had no room for
	statUnheld           // followed execs the exec ring had no room for (exec.go)
	statAggFull          // hits an aggregation map had no room for (agg.go)
	numStats
)

// config is how one program is generated.
type config struct {
	kind probe.Kind
	v4   bool  // signed division in the ISA (6.6+)
	rd   reads // how tracee memory is read
	key  callKey
	// tally counts in place instead of sending records (tally.go).
	tally bool
	// agg aggregates in place into its map instead (agg.go).
	agg *aggLayout
	// stack.depth > 0: records end with the user stack (-k, stack.go).
	stack stackConf
	// armed: an entry probe of a function that has a return probe too
	// reports only while return probes are armed, as its stamp does: an
	// entry seen before they are armed or after they are disarmed would
	// never get its return, nor be counted among the returns not seen.
	armed bool
}

// program is the generated code for one site, with its record layout.
type program struct {
	insns  asm.Instructions
	fields []field
	size   int
	// stackOff is where the user stack's area starts in the record, 0
	// for none; stackConf its mode (stack.go).
	stackOff  int
	stackConf stackConf
}

// progGen emits what a program does around its expressions (x): filter,
// entry times, record and ring, counting in place (tally.go), the stack
// (stack.go) and the system call programs' tables (syscall_prog.go).
type progGen struct {
	*code
	x *exprGen
}

func newProgGen(abi probe.ABI, kind probe.Kind, v4 bool, rd reads) *progGen {
	c := &code{}
	return &progGen{code: c, x: newExprGen(c, abi, kind, v4, rd)}
}

// compile generates the probe program of s: filter on tgid (when
// following forks), the entry time of a return probe's call, condition,
// then reserve, header, fetches, submit; or, counting in place, the
// counters' updates.
func compile(s *probe.Site, m maps, c config) (*program, error) {
	g := newProgGen(s.ABI, c.kind, c.v4, c.rd)
	p := &program{size: hdrSize}
	if c.kind == probe.Return {
		p.size = retHdrSize
	}
	for _, f := range s.Fetches {
		if c.tally || c.agg != nil {
			break // counts show no values; aggregations compute theirs
		}
		fl := field{off: p.size}
		switch e := f.Expr.(type) {
		case *probe.StrOf:
			fl.kind = fieldStr
			if e.Len != nil {
				fl.kind = fieldBuf
			}
			p.size += strSlotSize
		case *probe.StrLit:
			fl.kind, fl.lit = fieldLit, e.Val
		default:
			if f.Expr.Type().Str {
				return nil, fmt.Errorf("fetch %s: %w: string expression other than str()", f.Text, ErrUnsupported)
			}
			p.size += intSlotSize
		}
		p.fields = append(p.fields, fl)
	}

	if !c.tally && c.agg == nil {
		reserveStack(p, c.stack)
	}
	g.emit(asm.Mov.Reg(asm.R6, asm.R1))
	g.filterTgid(m)
	if c.kind == probe.Return || c.armed {
		g.requireArmed(m)
	}
	if c.kind == probe.Return {
		g.takeEntryTime(m, c.key, s.UsesEntryArgs())
	}
	if s.Cond != nil {
		g.emit(storeImm64(asm.RFP, slotFault, 0))
		if err := g.x.expr(s.Cond); err != nil {
			return nil, fmt.Errorf("condition %s: %w", s.Cond, err)
		}
		g.emit(
			asm.JEq.Imm(asm.R0, 0, "exit"),
			asm.LoadMem(asm.R1, asm.RFP, slotFault, asm.DWord),
			asm.JNE.Imm(asm.R1, 0, "exit"),
		)
	}
	switch {
	case c.tally:
		g.tally(m, c.kind == probe.Return)
	case c.agg != nil:
		if err := g.aggregate(s, c.agg, m); err != nil {
			return nil, fmt.Errorf("aggregation %s: %w", s.Spec.Agg.String(s.Spec), err)
		}
	default:
		if err := g.record(s, p, m, c); err != nil {
			return nil, err
		}
	}
	g.mark("exit")
	g.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	p.insns = g.insns
	return p, nil
}

// record reserves a record in the ring, fills it and submits it.
func (g *progGen) record(s *probe.Site, p *program, m maps, c config) error {
	g.emit(
		mapPtr(asm.R1, m.events),
		asm.Mov.Imm(asm.R2, int32(p.size)),
		asm.Mov.Imm(asm.R3, 0),
		asm.FnRingbufReserve.Call(),
		asm.JEq.Imm(asm.R0, 0, "lost"),
		asm.Mov.Reg(asm.R7, asm.R0),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.FnGetAttachCookie.Call(),
		asm.StoreMem(asm.R7, 0, asm.R0, asm.DWord),
		asm.FnGetCurrentPidTgid.Call(),
		asm.StoreMem(asm.R7, 8, asm.R0, asm.DWord),
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.R7, 16, asm.R0, asm.DWord),
	)
	if c.kind == probe.Return {
		g.storeReturn()
	}
	for i, f := range s.Fetches {
		if err := fetch(g, f, p.fields[i]); err != nil {
			// The verifier insists a reservation is released on every path,
			// so a program never exists half-built; errors are compile-time.
			return fmt.Errorf("fetch %s: %w", f.Text, err)
		}
	}
	g.storeStack(p)
	g.wakeFlags(m, asm.R2)
	g.emit(
		asm.Mov.Reg(asm.R1, asm.R7),
		asm.FnRingbufSubmit.Call(),
		asm.Ja.Label("exit"),
	)
	g.mark("lost")
	g.count(m, statLost)
	return nil
}

// wakeFlags puts in reg the flags a ring submit or output takes: waking
// the reader for every record costs a context switch per event, so
// records wait for its next poll unless a quarter of the ring is unread.
func (g *progGen) wakeFlags(m maps, reg asm.Register) {
	quiet := g.label()
	g.emit(
		mapPtr(asm.R1, m.events),
		asm.Mov.Imm(asm.R2, 0), // BPF_RB_AVAIL_DATA
		asm.FnRingbufQuery.Call(),
		asm.Mov.Imm(reg, 1), // BPF_RB_NO_WAKEUP
		asm.JLT.Imm(asm.R0, int32(m.wakeAt), quiet),
		asm.Mov.Imm(reg, 2), // BPF_RB_FORCE_WAKEUP
	)
	g.mark(quiet)
}

// fetch computes one fetch into the record R7 points to.
func fetch(g *progGen, f probe.Fetch, fl field) error {
	switch fl.kind {
	case fieldLit:
		return nil
	case fieldInt:
		g.emit(storeImm64(asm.RFP, slotFault, 0))
		if err := g.x.expr(f.Expr); err != nil {
			return err
		}
		g.emit(
			asm.StoreMem(asm.R7, int16(fl.off), asm.R0, asm.DWord),
			asm.LoadMem(asm.R1, asm.RFP, slotFault, asm.DWord),
			asm.StoreMem(asm.R7, int16(fl.off+8), asm.R1, asm.DWord),
		)
		return nil
	}
	if fl.kind == fieldBuf {
		return fetchBuf(g, f.Expr.(*probe.StrOf), fl)
	}
	// A string: compute the address, then read straight into the record.
	g.emit(storeImm64(asm.RFP, slotFault, 0))
	if err := g.x.expr(f.Expr.(*probe.StrOf).Addr); err != nil {
		return err
	}
	faulted, done := g.label(), g.label()
	g.emit(
		asm.LoadMem(asm.R1, asm.RFP, slotFault, asm.DWord),
		asm.JNE.Imm(asm.R1, 0, faulted),
	)
	null := g.label()
	g.emit(asm.JEq.Imm(asm.R0, 0, null))
	g.x.mem.readStrInto(asm.R7, int32(fl.off+8), probe.MaxStrLen+1)
	g.emit(
		asm.StoreMem(asm.R7, int16(fl.off), asm.R0, asm.DWord),
		asm.Ja.Label(done),
	)
	g.mark(null)
	g.emit(
		storeImm64(asm.R7, int16(fl.off), strNull),
		asm.Ja.Label(done),
	)
	g.mark(faulted)
	g.emit(storeImm64(asm.R7, int16(fl.off), -14)) // -EFAULT
	g.mark(done)
	return nil
}

// filterTgid exits unless the caller's process is in the traced set.
func (g *progGen) filterTgid(m maps) {
	if m.tgids == "" {
		return
	}
	g.emit(
		asm.FnGetCurrentPidTgid.Call(),
		asm.RSh.Imm(asm.R0, 32),
		asm.StoreMem(asm.RFP, slotTmp, asm.R0, asm.Word),
	)
	g.lookup(m.tgids, slotTmp)
	g.emit(asm.JEq.Imm(asm.R0, 0, "exit"))
}

// fetchBuf reads a sized string into the record: its length, at most
// MaxStrLen (bounded for the verifier), then that many bytes, or -EFAULT.
func fetchBuf(g *progGen, e *probe.StrOf, fl field) error {
	g.emit(storeImm64(asm.RFP, slotFault, 0))
	if err := g.x.expr(e.Addr); err != nil {
		return err
	}
	g.emit(asm.StoreMem(asm.RFP, slotAddr, asm.R0, asm.DWord))
	if err := g.x.expr(e.Len); err != nil {
		return err
	}
	faulted, short, done, null := g.label(), g.label(), g.label(), g.label()
	g.emit(
		asm.LoadMem(asm.R1, asm.RFP, slotFault, asm.DWord),
		asm.JNE.Imm(asm.R1, 0, faulted),
		asm.LoadMem(asm.R1, asm.RFP, slotAddr, asm.DWord),
		asm.JEq.Imm(asm.R1, 0, null), // NULL, as a string's
		asm.JLE.Imm(asm.R0, probe.MaxStrLen, short),
		asm.Mov.Imm(asm.R0, probe.MaxStrLen),
	)
	g.mark(short)
	g.emit(
		asm.StoreMem(asm.RFP, slotTmp, asm.R0, asm.DWord),
		asm.Mov.Reg(asm.R2, asm.R0),
		asm.Mov.Reg(asm.R1, asm.R7),
		asm.Add.Imm(asm.R1, int32(fl.off+8)),
		asm.LoadMem(asm.R3, asm.RFP, slotAddr, asm.DWord),
		asm.FnProbeReadUser.Call(),
		asm.JNE.Imm(asm.R0, 0, faulted),
		asm.LoadMem(asm.R1, asm.RFP, slotTmp, asm.DWord),
		asm.StoreMem(asm.R7, int16(fl.off), asm.R1, asm.DWord),
		asm.Ja.Label(done),
	)
	g.mark(null)
	g.emit(storeImm64(asm.R7, int16(fl.off), strNull), asm.Ja.Label(done))
	g.mark(faulted)
	g.emit(storeImm64(asm.R7, int16(fl.off), -14)) // -EFAULT
	g.mark(done)
	return nil
}
