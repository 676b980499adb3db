package output

import (
	"slices"

	"github.com/utap/utap/internal/dec"
	"github.com/utap/utap/probe"
)

// Calls from their numbers (probe.CallForms): the writer keeps a Call of
// each form, its values but their numbers and strings, and an engine
// passes each call's numbers and strings alone, a run of one thread's
// calls at a time. The lines are Call's, without the engine making a
// Call nor the CLI passing one on per call.

// formWriter is a callWriter that writes calls from their numbers and
// strings.
type formWriter interface {
	form(c *probe.Call) callForm
}

// callForm writes the calls of one form (Form.Calls).
type callForm interface {
	calls(pid, tid int, nums []uint64, strs []string, times []int64, n int) error
}

// A Form writes the calls of one form from their numbers, as Call writes
// them (probe.CallForm, but for its error).
type Form struct {
	p *PeriodicWriter
	f callForm
}

// Form is the writer of calls like c from their numbers (probe.CallForms),
// nil when the writer takes none so.
func (p *PeriodicWriter) Form(c *probe.Call) *Form {
	fw, ok := p.calls.(formWriter)
	if !ok {
		return nil
	}
	f := fw.form(c)
	if f == nil {
		return nil
	}
	return &Form{p: p, f: f}
}

// Calls writes n calls whose values' numbers are nums, len(nums)/n a
// call, each call's first its form's (probe.CallForm): what follows
// them in a call's share the form does not read. strs: the calls'
// strings, times: their times (probe.CallForm), nil when the writer
// shows none.
func (f *Form) Calls(pid, tid int, nums []uint64, strs []string, times []int64, n int) error {
	p := f.p
	p.lock()
	err := p.err
	if err == nil {
		err = p.wrote(f.f.calls(pid, tid, nums, strs, times, n))
	}
	p.unlock()
	return err
}

// textForm is a form's Call, its numbers set per call for text.Call,
// and how each number is written, for Call's hot path written here
// straight from the numbers, in one loop (half of a line's cost was
// taking the values apart again, a fifth more a call per part).
type textForm struct {
	t *text
	formCall
	nums []formNum // how each value is written
}

// formCall is a form's own copy of its Call, and its values in order.
type formCall struct {
	c    probe.Call
	vals []*probe.Value // c's: Args, Out, then Ret (an entry alone: Args)
}

// init makes f a copy of c, and says whether its values are numbers and
// strings alone (none unreadable, NULL or a name).
func (f *formCall) init(c *probe.Call) bool {
	f.c = *c
	f.c.Args, f.c.Out = slices.Clone(c.Args), slices.Clone(c.Out)
	f.vals = f.vals[:0]
	for i := range f.c.Args {
		f.vals = append(f.vals, &f.c.Args[i])
	}
	if f.c.Return >= 0 {
		for i := range f.c.Out {
			f.vals = append(f.vals, &f.c.Out[i])
		}
		f.vals = append(f.vals, &f.c.Ret)
	}
	for _, v := range f.vals {
		if str := v.IsStr && !v.Err && !v.Null && v.Name == ""; !str && !isInt(v) {
			return false
		}
	}
	return true
}

// stride is the numbers a call of n takes in nums; false: fewer than the
// form's values.
func (f *formCall) stride(nums []uint64, n int) (int, bool) {
	s := len(nums) / max(n, 1)
	return s, s >= len(f.vals)
}

// nextTimes is the first call's times of times (3 a call; none: 0s),
// and the others'.
func nextTimes(times []int64) (at, ret, dur int64, rest []int64) {
	if len(times) < 3 {
		return 0, 0, 0, times
	}
	return times[0], times[1], times[2], times[3:]
}

// set gives the values the numbers nums and strings strs of one call,
// and returns the strings left.
func (f *formCall) set(nums []uint64, strs []string) []string {
	for i, v := range f.vals {
		v.Int = nums[i]
		if v.IsStr {
			v.Str, strs = strs[0], strs[1:]
		}
	}
	return strs
}

// formNum is how a form writes a number: after sep, as kind says.
type formNum struct {
	sep  numSep
	kind numKind
}

// numSep is what comes before a number: constant appends, not a string's
// (a memmove each).
type numSep uint8

const (
	sepNone  numSep = iota // the first argument
	sepComma               // ", "
	sepRet                 // ") = "
)

// numKind is how a form writes a number.
type numKind uint8

const (
	numSigned   numKind = iota // decimal, signed
	numUnsigned                // decimal
	numGuess                   // ltrace's guess (appendGuess)
	numValue                   // ltraceValue, the form's Value with the number (or string)
)

func kindOf(v *probe.Value) numKind {
	switch {
	case v.IsStr:
		return numValue
	case plainInt(v) && v.Signed:
		return numSigned
	case plainInt(v):
		return numUnsigned
	case v.Format == probe.FormatGuess:
		return numGuess
	}
	return numValue
}

func (t *text) form(c *probe.Call) callForm {
	// Every call of a form makes a line at once: a call and its return
	// twins (oneLine), an entry alone no return twin waits for, no depth
	// to show (-n).
	if c.Return >= 0 && !t.oneLine(c.Entry, c.Return, c.Func) || c.Return < 0 && t.waitsForReturn(c.Entry, c.Func) || t.o.Indent > 0 {
		return nil
	}
	f := &textForm{t: t}
	if !f.init(c) {
		return nil
	}
	for i, v := range f.vals {
		sep := sepComma
		switch {
		case i == len(f.c.Args)+len(f.c.Out) && f.c.Return >= 0: // the return value
			sep = sepRet
		case i == 0:
			sep = sepNone
		}
		f.nums = append(f.nums, formNum{sep: sep, kind: kindOf(v)})
	}
	return f
}

// calls writes the n calls of nums, len(nums)/n a call, at times (3 a
// call, or nil): straight from the numbers after the last line's start
// (hot) or a start of their own (a clock shown), else by Call, which
// writes the call's line too (form) and makes it hot for the next.
func (f *textForm) calls(pid, tid int, nums []uint64, strs []string, times []int64, n int) error {
	c, t := &f.c, f.t
	w := len(f.vals)
	stride, ok := f.stride(nums, n)
	if !ok {
		return nil
	}
	c.PID, c.TID = pid, tid
	for ; n > 0; n, nums = n-1, nums[stride:] {
		c.TimeNs, c.ReturnNs, c.DurationNs, times = nextTimes(times)
		var b []byte
		switch {
		case t.hot(c):
			b = append(t.w.room(), t.headText...)
		case !t.hotCalls:
			b = t.lineStart(t.endPending(t.w.room()), c.TimeNs, tid, c.Func, c.Probe)
		default:
			strs = f.set(nums[:w], strs)
			if _, err := t.Call(c); err != nil {
				return err
			}
			continue
		}
		var err error
		if strs, err = f.line(b, nums[:w], strs, c.DurationNs); err != nil {
			return err
		}
	}
	return nil
}

// line writes the line of a call whose numbers are nums, strings strs
// and duration durNs after its start, b, and returns the strings left.
func (f *textForm) line(b []byte, nums []uint64, strs []string, durNs int64) ([]string, error) {
	t := f.t
	for i, u := range nums {
		n := &f.nums[i]
		switch n.sep {
		case sepComma:
			b = append(b, ", "...)
		case sepRet:
			b = append(b, ") = "...)
		}
		switch n.kind {
		case numSigned:
			b = dec.Append(b, u, true)
		case numUnsigned:
			b = dec.Append(b, u, false)
		case numGuess:
			b = appendGuess(b, u)
		default:
			v := f.vals[i]
			v.Int = u
			if v.IsStr {
				v.Str, strs = strs[0], strs[1:]
			}
			b = ltraceValue(b, v, t.o.StrLen)
		}
	}
	if f.c.Return < 0 {
		return strs, t.flushLine(append(b, ')', '\n')) // an entry alone, as callLine ends it
	}
	return strs, t.flushLine(t.endResult(b, durNs))
}

// jsonForm is a form's Call for the JSON writer: its two events' lines,
// their heads kept for the run's thread.
type jsonForm struct {
	j *jsonLines
	formCall
	// heads: the entry's and the return's fields from "pid" to "args"
	// (jsonHeads.of), of thread tid of pid.
	pid, tid           int
	entryHead, retHead []byte
}

func (j *jsonLines) form(c *probe.Call) callForm {
	f := &jsonForm{j: j}
	if !f.init(c) {
		return nil
	}
	return f
}

// calls writes each call's two lines, as jsonLines.Call writes them.
func (f *jsonForm) calls(pid, tid int, nums []uint64, strs []string, times []int64, n int) error {
	c, j := &f.c, f.j
	w := len(f.vals)
	stride, ok := f.stride(nums, n)
	if !ok {
		return nil
	}
	if f.entryHead == nil || pid != f.pid || tid != f.tid {
		f.pid, f.tid = pid, tid
		ev := probe.Event{PID: pid, TID: tid, Probe: c.Probe, Func: c.Func, Kind: "entry"}
		f.entryHead = append(f.entryHead[:0], j.heads.of(&ev)...)
		ev.Probe, ev.Kind = c.ReturnProbe, "return"
		f.retHead = append(f.retHead[:0], j.heads.of(&ev)...)
	}
	na, no := len(c.Args), len(c.Out)
	for ; n > 0; n, nums = n-1, nums[stride:] {
		var at, ret, dur int64
		at, ret, dur, times = nextTimes(times)
		strs = f.set(nums[:w], strs)
		b := append(j.w.room(), `{"time_ns":`...)
		b = j.time.append(b, at)
		b = f.values(append(b, f.entryHead...), na, 0)
		b = append(b, `],"ret":null,"duration_ns":0}`+"\n"...)
		if c.Return < 0 { // an entry alone
			if err := j.w.commit(b); err != nil {
				return err
			}
			continue
		}
		b = append(b, `{"time_ns":`...)
		b = j.time.append(b, ret)
		b = f.values(append(b, f.retHead...), no, na)
		b = append(b, `],"ret":`...)
		b = f.values(b, 1, na+no)
		b = append(b, `,"duration_ns":`...)
		b = dec.AppendInt(b, dur)
		if err := j.w.commit(append(b, "}\n"...)); err != nil {
			return err
		}
	}
	return nil
}

// values writes n of the form's values from at, comma-separated (their
// numbers and strings set).
func (f *jsonForm) values(b []byte, n, at int) []byte {
	for i, v := range f.vals[at : at+n] {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonValue(b, v)
	}
	return b
}
