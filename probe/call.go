package probe

// A Call is a function call an engine read whole, its entry and its
// return one right after the other (or an entry with no return after
// it), handed to a CallWriter as plain values instead of an event pair
// (Target.Calls): no event is made, no stage runs, no time is converted
// that no line shows. It is the trace a user types most (a
// line per call, its arguments and return value), millions a second
// from the in-process pads, where making and passing two events cost
// more than the line itself (docs/benchmarks.md).
//
// Its fields are what the pair's events would hold before the CLI's
// stages: Args the entry's values, Out the return probe's (a typed
// return value, output arguments), Ret the raw return register. Valid
// only during CallWriter.Call, its strings too: they may be the engine's
// buffer, not copies.
type Call struct {
	PID, TID int
	// Probe and Func are the entry's (Event.Probe, Func); ReturnProbe
	// the return's Probe.
	Probe, Func, ReturnProbe string
	// Entry and Return are the probe indexes (Event.ProbeIndex) of the
	// call's entry and return; Return is -1 for an entry alone, its
	// return not next (an entry-only trace): Out and Ret are then empty.
	Entry, Return int
	Args, Out     []Value
	Ret           Value
	// TimeNs, ReturnNs and DurationNs are the entry's time, the
	// return's and the call's duration, as its events' (Event.TimeNs,
	// the return's TimeNs and DurationNs), when the CallWriter is Timed;
	// else 0.
	TimeNs, ReturnNs, DurationNs int64
}

// A CallWriter takes calls without events (Target.Calls).
type CallWriter interface {
	// Takes says whether the calls of function fn whose entry or return
	// is probe index probe may come as Calls: asked once per probe site,
	// the answer kept. A Call comes only when both halves' probes said
	// yes.
	Takes(probe int, fn string) bool
	// Call takes c, or says it did not: the engine then emits its two
	// events as usual, in its place.
	Call(c *Call) bool
	// Timed says whether Calls carry their times (TimeNs, DurationNs):
	// asked once.
	Timed() bool
}

// A CallForms is a CallWriter that also takes calls as their numbers
// alone (Form): an engine that reads a call's values as raw numbers (the
// pads' one-record calls) passes the numbers, a run of one thread's calls
// at a time, and the writer formats the lines straight from them, no
// Call made per call nor passed on (docs/benchmarks.md).
type CallForms interface {
	CallWriter
	// Form returns the writer of the calls like c whose every value is
	// a number or a string (none unreadable or NULL): c's values but
	// their numbers and strings say how each is shown. It writes every
	// call it is given (as Call would take them); nil: such calls come
	// as Calls. Asked once per pair of probe sites, the answer kept; c
	// is valid only during the call.
	Form(c *Call) CallForm
}

// A CallForm writes the calls of one form (CallForms.Form).
type CallForm interface {
	// Calls writes n calls of thread tid of process pid, one after the
	// other, whose values' numbers are nums: len(nums)/n a call, Args',
	// then Out's, then Ret's. strs holds each call's strings, those of
	// its values that are strings in the form's Call (Value.IsStr), in
	// order; valid only during the call. times holds, when the
	// CallWriter is Timed, each call's TimeNs, ReturnNs and DurationNs;
	// else nil.
	Calls(pid, tid int, nums []uint64, strs []string, times []int64, n int)
}

// A Batcher is told of the batches an engine emits (Target.Lines): Hold
// before a batch's first event, Release once its last is emitted and
// before any probe waiting for the batch to be read goes on. Between the
// two, the goroutine that called Hold is the only one emitting (the
// writer may be locked for it).
type Batcher interface {
	Hold()
	Release()
}
