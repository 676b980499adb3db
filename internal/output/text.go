package output

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/utap/utap/internal/dec"
	"github.com/utap/utap/internal/syscalls"
	"github.com/utap/utap/probe"
)

// text writes ltrace-like lines. An entry probe with a return twin
// (Options.Calls) and its return make one line per call:
//
//	[pid 1234] malloc(24) = 0x55d0c8a2b2a0
//
// The entry is written as it comes, without its line end; when anything
// else is written before its return, it ends " <unfinished ...>" and the
// return comes later as "<... malloc resumed> ) = 0x55d0c8a2b2a0", as
// ltrace shows it. A return carrying arguments (output arguments, read at
// the return: read's buffer) continues the list its entry began:
//
//	[pid 1234] read(3, "hello\n", 4096) = 6
//	[pid 1234] read(3 <unfinished ...>
//	[pid 1234] <... read resumed> , "hello\n", 4096) = 6
//
// Other probes have a line per event:
//
//	[pid 1234] work(1, 2)
//	[pid 1234] work() = 4 <0.000012>
//
// The bracketed number is the thread id, as in strace (it equals the pid
// for a process's main thread).
type text struct {
	w    *lineBuf
	o    Options
	off  time.Duration
	last int64 // the time of the previous line, for -r
	// sec and secText: the last stamp's wall second, "15:04:05" in
	// local time (time's formatting a line cost more than the line).
	sec     int64
	secText []byte

	twins    []uint8             // by probe index: entryTwin, retTwin
	open     map[int]*[]openCall // tid → calls entered, return not seen yet
	lastTID  int                 // the thread of lastOpen: the last looked up
	lastOpen *[]openCall
	pending  *pendingCall   // the entry whose line is not ended yet
	pend     pendingCall    // what pending points to: one at a time, no allocation per call
	sysOpen  map[int]string // tid → the system call whose entry line was ended unfinished
	tids     map[int]bool   // threads seen on strace lines
	fmtr     syscalls.Formatter
	so       syscalls.Options // sysOptions' without -y
	// unpairedFn: the last function Options.Unpaired was asked about,
	// and its answer (a name compare per entry, not a switch).
	unpairedFn string
	unpairedIs bool
	pidTID     int            // the thread of pidText
	pidText    []byte         // "[pid N] "
	comms      map[int]string // strace -Y: the threads' names (appendPIDComm)
	// headText is the last call line's start, "[pid N] name(", of
	// headTID's call of headFn (headProbe when no function).
	headTID           int
	headFn, headProbe string
	headText          []byte
	// hotEntry and hotRet are the probe indexes of the last Call written
	// with headText's head, its checks passed (Call's fast path); -2:
	// none. hotCalls: the options let Calls take it (no clock, no -n).
	hotEntry, hotRet int
	hotCalls         bool
}

// openCall is a call whose entry was written: its function and how many
// arguments the entry showed (the return's continue after them).
type openCall struct {
	fn    string
	nargs int
}

// set fills p field by field: a struct literal assigned whole was built
// on the stack and copied in wide loads that waited for the narrow stores
// before them (a stall per call, a tenth of the text writer's time).
func (p *pendingCall) set(tid int, fn string, stack []probe.Frame, sys bool, col int) {
	p.tid, p.fn, p.stack, p.sys, p.col = tid, fn, stack, sys, col
}

type pendingCall struct {
	tid   int
	fn    string
	stack []probe.Frame // -k: shown once the line ends
	sys   bool          // a system call's entry (systext.go)
	col   int           // its line's width, for strace's column
}

func newText(w io.Writer, o Options) *text {
	switch {
	case o.StrLen == 0:
		o.StrLen = DefaultStrLen
	case o.StrLen < 0:
		o.StrLen = 0
	}
	t := &text{w: newLineBuf(w), o: o, off: monoToWall(),
		open: map[int]*[]openCall{}, sysOpen: map[int]string{}, tids: map[int]bool{},
		hotEntry: -2, hotCalls: o.Clock == ClockNone && !o.WallClock && o.Indent == 0}
	for e, r := range o.Calls {
		t.twin(e, isEntryTwin)
		t.twin(r, isRetTwin)
	}
	return t
}

// What a probe index is to its twin (Options.Calls), in text.twins.
const (
	isEntryTwin uint8 = 1 << iota
	isRetTwin
)

func (t *text) twin(i int, bit uint8) {
	if i < 0 {
		return
	}
	for len(t.twins) <= i {
		t.twins = append(t.twins, 0)
	}
	t.twins[i] |= bit
}

func (t *text) isTwin(i int, bit uint8) bool {
	return i >= 0 && i < len(t.twins) && t.twins[i]&bit != 0
}

// unpaired says whether fn's entries show alone (Options.Unpaired).
func (t *text) unpaired(fn string) bool {
	if t.o.Unpaired == nil {
		return false
	}
	if !same(fn, t.unpairedFn) {
		t.unpairedFn, t.unpairedIs = fn, t.o.Unpaired(fn)
	}
	return t.unpairedIs
}

// calls is tid's open calls: a map lookup only when the thread changes,
// and never freed (a thread's is a few words).
func (t *text) calls(tid int) *[]openCall {
	if t.lastOpen != nil && t.lastTID == tid {
		return t.lastOpen
	}
	c := t.open[tid]
	if c == nil {
		c = new([]openCall)
		t.open[tid] = c
	}
	t.lastTID, t.lastOpen = tid, c
	return c
}

func (t *text) Write(ev *probe.Event) error {
	if ev.Return != nil {
		return t.writeCall(ev)
	}
	if t.o.LtraceEnds && (ev.Kind == "signal" || ev.Kind == "exit") {
		return t.ltraceEnd(ev)
	}
	if ev.Sys != nil || ev.Kind == "signal" || ev.Kind == "exit" {
		return t.sysLine(ev)
	}
	ret := ev.Kind == "return"
	entryTwin := !ret && t.waitsForReturn(ev.ProbeIndex, ev.Func)
	retTwin := ret && t.isTwin(ev.ProbeIndex, isRetTwin)
	b := t.w.room()
	if p := t.pending; retTwin && p != nil && !p.sys && p.tid == ev.TID && p.fn == ev.Func {
		// The call's own return, with nothing written in between.
		t.pending = nil
		_, nargs := t.pop(ev.TID, ev.Func)
		b = append(t.outArgs(b, ev.Args, nargs), ')')
		b = t.result(b, ev.Ret, ev.DurationNs)
		b = appendStack(b, p.stack)
		return t.flushLine(b)
	}
	b = t.endPending(b)
	switch {
	case entryTwin:
		open := t.calls(ev.TID)
		b = t.prefix(b, ev, len(*open))
		*open = append(*open, openCall{ev.Func, len(ev.Args)})
		b = t.call(b, ev)
		t.pend.set(ev.TID, ev.Func, ev.Stack, false, 0)
		t.pending = &t.pend
		return t.w.commit(b)
	case retTwin:
		depth, nargs := t.pop(ev.TID, ev.Func)
		b = t.prefix(b, ev, depth)
		b = append(b, "<... "...)
		b = append(b, name(ev)...)
		b = append(b, " resumed> "...)
		b = append(t.outArgs(b, ev.Args, nargs), ')')
		b = t.result(b, ev.Ret, ev.DurationNs)
	default:
		b = t.prefix(b, ev, len(*t.calls(ev.TID)))
		b = append(t.call(b, ev), ')')
		if ret {
			b = t.result(b, ev.Ret, ev.DurationNs)
		} else {
			b = append(b, '\n')
		}
	}
	b = appendStack(b, ev.Stack)
	return t.flushLine(b)
}

func (t *text) flushLine(b []byte) error { return t.w.commit(b) }

func (t *text) takesPairs() {}

// writeCall writes a call the engine emitted in one event, its entry
// with its Return (probe.Event.Return): the line its two events make one
// after the other, without the open call and pending line kept between
// them. Events that would not make one line go one by one.
func (t *text) writeCall(ev *probe.Event) error {
	r := ev.Return
	if r.TID != ev.TID || r.Func != ev.Func || r.Kind != "return" || ev.Kind == "return" || r.Sys != nil || ev.Sys != nil ||
		!t.oneLine(ev.ProbeIndex, r.ProbeIndex, ev.Func) {
		return probe.Apart(ev, t.Write)
	}
	b := t.endPending(t.w.room())
	b = t.args(t.head(b, ev, len(*t.calls(ev.TID))), ev.Args)
	b = append(t.outArgs(b, r.Args, len(ev.Args)), ')')
	b = t.result(b, r.Ret, r.DurationNs)
	return t.flushLine(appendStack(b, ev.Stack))
}

// takesCalls says whether calls may come without events (Call): not
// when a line shows what a Call does not hold (-i's address).
func (t *text) takesCalls() bool { return t.o.Addr == nil }

// callsTimed says whether lines show times: a clock, -T.
func (t *text) callsTimed() bool {
	return t.o.Clock != ClockNone || t.o.WallClock || t.o.Durations
}

// Call writes a call that came without events (probe.Call) as writeCall
// writes its pair, and an entry alone (c.Return < 0) as Write writes the
// entry of a probe without a return twin; false: its events would not
// make that line (not twins, an entry with one, -n's indentation), for
// the engine to emit them instead.
func (t *text) Call(c *probe.Call) (bool, error) {
	if t.hot(c) {
		// The last Call's function again, from the same thread, as
		// most of a trace's lines are: its head and its checks kept.
		return true, t.callLine(append(t.w.room(), t.headText...), c)
	}
	if t.o.Indent > 0 && len(*t.calls(c.TID)) > 0 {
		return false, nil
	}
	if c.Return < 0 && t.waitsForReturn(c.Entry, c.Func) || c.Return >= 0 && !t.oneLine(c.Entry, c.Return, c.Func) {
		return false, nil
	}
	b := t.lineStart(t.endPending(t.w.room()), c.TimeNs, c.TID, c.Func, c.Probe)
	if t.hotCalls {
		t.hotEntry, t.hotRet = c.Entry, c.Return // lineStart kept this call's head
	}
	return true, t.callLine(b, c)
}

// hot says whether c's line may start with headText, its checks
// passed before (Call): the same thread, function and probes as the
// last Call's, nothing pending.
func (t *text) hot(c *probe.Call) bool {
	return c.Entry == t.hotEntry && c.Return == t.hotRet && c.TID == t.headTID && t.pending == nil &&
		same(c.Func, t.headFn) && same(c.Probe, t.headProbe)
}

// callLine writes a Call's line after its start, b.
func (t *text) callLine(b []byte, c *probe.Call) error {
	b = t.args(b, c.Args)
	if c.Return < 0 {
		return t.flushLine(append(b, ')', '\n'))
	}
	b = append(t.outArgs(b, c.Out, len(c.Args)), ')')
	return t.flushLine(t.result(b, &c.Ret, c.DurationNs))
}

// waitsForReturn says whether an entry of probe index entry into fn
// leaves its line open for its return twin (Options.Calls, unless
// Options.Unpaired).
func (t *text) waitsForReturn(entry int, fn string) bool {
	return t.isTwin(entry, isEntryTwin) && !t.unpaired(fn)
}

// oneLine says whether fn's entry and return, of probe indexes entry
// and ret, one right after the other make one line: twins.
func (t *text) oneLine(entry, ret int, fn string) bool {
	return t.waitsForReturn(entry, fn) && t.isTwin(ret, isRetTwin)
}

// endPending ends the line of an entry whose return did not come next.
func (t *text) endPending(b []byte) []byte {
	if t.pending == nil {
		return b
	}
	p := t.pending
	t.pending = nil
	b = append(b, " <unfinished ...>\n"...)
	if p.sys {
		return b // strace -k shows a call's stack once, under its resumed line
	}
	return appendStack(b, p.stack)
}

// outArgs writes the arguments a return carries, after the nargs its
// entry showed, as ltrace continues them.
func (t *text) outArgs(b []byte, vals []probe.Value, nargs int) []byte {
	for i := range vals {
		if i > 0 || nargs > 0 {
			b = append(b, ", "...)
		}
		b = ltraceValue(b, &vals[i], t.o.StrLen)
	}
	return b
}

// pop takes fn off the thread's open calls (with any entered after it
// whose return was never seen) and returns the depth left and how many
// arguments its entry showed.
func (t *text) pop(tid int, fn string) (depth, nargs int) {
	open := t.calls(tid)
	calls := *open
	for i := len(calls) - 1; i >= 0; i-- {
		if calls[i].fn == fn {
			nargs = calls[i].nargs
			calls = calls[:i]
			break
		}
	}
	*open = calls
	return len(calls), nargs
}

// prefix starts a line: the thread, -tt's time (ltrace's and strace's
// order), -i's address, -n's indentation.
func (t *text) prefix(b []byte, ev *probe.Event, depth int) []byte {
	b = t.stamp(t.appendPID(b, ev.TID), ev.TimeNs)
	if t.o.Addr != nil {
		if a, ok := t.o.Addr(ev); ok {
			b = fmt.Appendf(b, "[%#x] ", a)
		}
	}
	if t.o.Indent > 0 && depth > 0 {
		b = append(b, strings.Repeat(" ", t.o.Indent*depth)...)
	}
	return b
}

// appendPID writes the thread, "[pid N] ": the last thread's, written
// once (lines mostly come from one thread).
func (t *text) appendPID(b []byte, tid int) []byte {
	if t.pidTID != tid || len(t.pidText) == 0 {
		t.pidTID = tid
		if t.o.FilePIDs {
			t.pidText = append(dec.AppendInt(t.pidText[:0], int64(tid)), ' ')
		} else {
			t.pidText = append(dec.AppendInt(append(t.pidText[:0], "[pid "...), int64(tid)), "] "...)
		}
	}
	return append(b, t.pidText...)
}

// stamp writes the line's time stamp, if any (-tt, -t, -ttt, -r).
func (t *text) stamp(b []byte, ns int64) []byte {
	if t.o.Clock == ClockNone && !t.o.WallClock {
		return b // the common case: no clock, no time conversion
	}
	if t.o.Clock == ClockRelative {
		var d int64
		if t.last != 0 {
			d = max(ns-t.last, 0)
		}
		t.last = ns
		// "%3d.%06d "
		if s := d / 1e9; s < 10 {
			b = append(b, "  "...)
		} else if s < 100 {
			b = append(b, ' ')
		}
		return append(appendUsFrac(dec.AppendInt(b, d/1e9), d%1e9/1e3), ' ')
	}
	wall := ns + int64(t.off)
	sec, frac := wall/1e9, wall%1e9
	if frac < 0 {
		sec, frac = sec-1, frac+1e9
	}
	switch {
	case t.o.Clock == ClockEpoch:
		b = appendUsFrac(dec.AppendInt(b, sec), frac/1e3)
	case t.o.WallClock:
		b = appendUsFrac(t.clock(b, sec), frac/1e3)
	case t.o.Clock == ClockTimeOfDay:
		b = t.clock(b, sec)
	}
	return append(b, ' ')
}

// clock writes wall second sec as "15:04:05" in local time, formatted
// once a second.
func (t *text) clock(b []byte, sec int64) []byte {
	if sec != t.sec || len(t.secText) == 0 {
		t.sec = sec
		t.secText = time.Unix(sec, 0).AppendFormat(t.secText[:0], "15:04:05")
	}
	return append(b, t.secText...)
}

// appendUsFrac writes ".%06d" of us < 1e6.
func appendUsFrac(b []byte, us int64) []byte { return dec.AppendPad6(append(b, '.'), uint64(us)) }

// name is the function a line shows: a PLT stub as the function it
// calls (puts@plt as puts), as ltrace shows its calls.
func name(ev *probe.Event) string { return funcName(ev.Func, ev.Probe) }

func funcName(fn, probe string) string {
	if fn == "" {
		return probe
	}
	return strings.TrimSuffix(fn, "@plt")
}

// call writes "name(args" (no closing parenthesis).
func (t *text) call(b []byte, ev *probe.Event) []byte {
	return t.args(append(append(b, name(ev)...), '('), ev.Args)
}

// head starts a call's line, "[pid N] name(", the last one kept: a
// thread mostly calls one function many times over.
func (t *text) head(b []byte, ev *probe.Event, depth int) []byte {
	if t.o.Addr != nil || (t.o.Indent > 0 && depth > 0) {
		return append(append(t.prefix(b, ev, depth), name(ev)...), '(')
	}
	return t.lineStart(b, ev.TimeNs, ev.TID, ev.Func, ev.Probe)
}

// lineStart is head without an address or indentation: "[pid N] name(",
// the time at ns after the thread if a clock shows one.
func (t *text) lineStart(b []byte, ns int64, tid int, fn, probe string) []byte {
	if t.o.Clock == ClockNone && !t.o.WallClock {
		return t.callHead(b, tid, fn, probe)
	}
	return append(append(t.stamp(t.appendPID(b, tid), ns), funcName(fn, probe)...), '(')
}

// same says whether a and b are the same string in memory: the names of
// one probe site's lines are, and a compare of their bytes is a call per
// line. Equal strings elsewhere in memory only miss a cache.
func same(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// callHead is lineStart without a clock: "[pid N] name(", the last
// one kept.
func (t *text) callHead(b []byte, tid int, fn, probe string) []byte {
	if tid != t.headTID || !same(fn, t.headFn) || !same(probe, t.headProbe) || len(t.headText) == 0 {
		t.headTID, t.headFn, t.headProbe = tid, fn, probe
		t.hotEntry = -2
		t.headText = append(append(t.appendPID(t.headText[:0], tid), funcName(fn, probe)...), '(')
	}
	return append(b, t.headText...)
}

// args writes an entry's values, comma-separated.
func (t *text) args(b []byte, vals []probe.Value) []byte {
	for i := range vals {
		if i > 0 {
			b = append(b, ", "...)
		}
		if v := &vals[i]; plainInt(v) {
			b = dec.Append(b, v.Int, v.Signed) // ltraceValue's, a call fewer
		} else {
			b = ltraceValue(b, v, t.o.StrLen)
		}
	}
	return b
}

// plainInt says whether v is a plain integer, written as its digits:
// most values.
func plainInt(v *probe.Value) bool { return v.Format == probe.FormatDefault && isInt(v) }

// isInt says whether v is an integer to write per its format: not a
// string, unreadable, NULL or a name.
func isInt(v *probe.Value) bool { return !v.IsStr && !v.Err && !v.Null && v.Name == "" }

// ltraceValue is formatValue with ltrace's rule for strings: it reads at
// most -s bytes, so a string of exactly -s bytes may go on, and is shown
// with "..." (strace reads one byte more, and shows it whole).
func ltraceValue(b []byte, v *probe.Value, strLen int) []byte {
	if isInt(v) {
		// A plain integer, most values, or ltrace's guess for an
		// untyped return: straight to its digits, as formatValue
		// writes it, without its switch.
		switch v.Format {
		case probe.FormatDefault:
			return dec.Append(b, v.Int, v.Signed)
		case probe.FormatGuess:
			return appendGuess(b, v.Int)
		}
	}
	b = formatValue(b, v, strLen)
	if v.IsStr && !v.Err && !v.Null && v.Name == "" && strLen > 0 && len(cstr(v)) == strLen {
		b = append(b, "..."...)
	}
	return b
}

// result writes " = value" and -T's duration, and ends the line.
func (t *text) result(b []byte, ret *probe.Value, durNs int64) []byte {
	b = append(b, " = "...)
	switch {
	case ret == nil:
		b = append(b, '?')
	case plainInt(ret):
		b = dec.Append(b, ret.Int, ret.Signed)
	default:
		b = ltraceValue(b, ret, t.o.StrLen)
	}
	return t.endResult(b, durNs)
}

// endResult writes -T's duration after a result, and ends the line.
func (t *text) endResult(b []byte, durNs int64) []byte {
	if t.o.Durations && durNs > 0 {
		b = append(b, " <"...)
		b = strconv.AppendFloat(b, float64(durNs)/1e9, 'f', 6, 64)
		b = append(b, '>')
	}
	return append(b, '\n')
}

func (t *text) Flush() error { return t.w.Flush() }

// End ends the line of a call still running when the trace ends, as
// ltrace does, and flushes.
func (t *text) End() error {
	if t.pending != nil {
		if err := t.w.commit(t.endPending(t.w.room())); err != nil {
			return err
		}
	}
	return t.w.Flush()
}
