package output

import (
	"io"
	"time"

	"github.com/utap/utap/internal/profile"
	"github.com/utap/utap/internal/syscalls"
	"github.com/utap/utap/probe"
	"golang.org/x/sys/unix"
)

// Options shape how events are written.
type Options struct {
	// WallClock prefixes text lines with the wall-clock time of the event
	// (-tt), converted from the engines' CLOCK_MONOTONIC timestamps.
	WallClock bool
	// StrLen is the longest string shown before it is cut with "..." (-s);
	// 0 means DefaultStrLen, NoStrings none at all (-s 0: `""...`).
	StrLen int
	// Durations shows the time spent in a call on return lines (-T).
	Durations bool
	// LtraceEnds: a trace of functions only shows signals and the
	// processes' ends as ltrace does (ltraceends.go), strace's otherwise.
	LtraceEnds bool
	// Calls maps the index of an entry probe to that of its return twin
	// (cmd/utap/twins.go): the text writer shows each call as one line,
	// entry arguments and return value, as ltrace does.
	Calls map[int]int
	// Unpaired says which functions' entry probes have no return twin
	// after all (uretprobe.NoReturnProbe): their lines end at the entry.
	Unpaired func(fn string) bool
	// Indent indents call lines by this many spaces per nesting level of
	// the thread's calls (ltrace -n).
	Indent int
	// Clock is the time stamp of text lines besides WallClock (-tt):
	// ClockTimeOfDay (-t), ClockEpoch (-ttt) or ClockRelative (-r), which
	// wins over the others as in ltrace.
	Clock Clock
	// Addr, when set, gives the address shown as [0x...] after the thread
	// on text lines (ltrace -i): the CLI's link-time address of the probe.
	Addr func(*probe.Event) (uint64, bool)
	// StracePIDs puts "[pid N] " before system call, signal and exit lines
	// (strace -f); without it they start with the call, as strace's do.
	StracePIDs bool
	// FilePIDs writes pids as strace and ltrace write them into a file
	// (-o with -f): "N " before a function's line (ltrace's "%d "), and
	// before a system call's padded to five ("%-5d ", strace's; -Y's
	// "N<comm> "), not "[pid N] " as on a terminal.
	FilePIDs bool
	// FdPath shows a file descriptor of a system call as fd<path> (strace
	// -y); nil: as a number.
	FdPath func(pid, fd int) string
	// Weight is what the profile formats weigh stacks by: calls, or time
	// where return probes time them (pprof: the sample type shown first).
	Weight profile.Value
	// Sys is how system calls decode beyond -s and -y.
	Sys SysStyle
}

// SysStyle is strace's -X, -e raw=, -e verbose=, -e abbrev=, -e read= and
// -e write=.
type SysStyle struct {
	Xlat syscalls.XlatStyle
	// Raw: the calls shown undecoded (-e raw=); Terse: those whose
	// structures show as addresses (not in -e verbose=); Full: those whose
	// structures show whole (not in -e abbrev=). nil: none.
	Raw, Terse, Full func(nr int) bool
	// DumpRead and DumpWrite: the fds whose data read or written is
	// dumped after the call (-e read=, -e write=); nil: none.
	DumpRead, DumpWrite func(fd int) bool
	// Hex: every string in hex (strace -xx).
	Hex bool
	// Comm: the thread's name after its id, [pid N<comm>] (strace -Y).
	Comm bool
	// Column is where " = result" aligns (strace -a); 0: strace's 40,
	// negative: not aligned (-a 0).
	Column int
}

// Clock is a text line's time stamp (ltrace -t, -ttt, -r).
type Clock uint8

const (
	ClockNone      Clock = iota
	ClockTimeOfDay       // 15:04:05 (-t)
	ClockEpoch           // 1700000000.123456 (-ttt)
	ClockRelative        // seconds since the previous line, 0.000123 (-r)
)

// ender is a Writer with a line to end when the trace ends.
type ender interface{ End() error }

// End ends what w left open (a call still running) and flushes it.
func End(w Writer) error {
	if e, ok := w.(ender); ok {
		return e.End()
	}
	return w.Flush()
}

// NoStrings is StrLen for -s 0: every non-empty string shows as `""...`,
// as strace -s 0 shows it.
const NoStrings = -1

// DefaultStrLen is strace's and ltrace's default -s.
const DefaultStrLen = 32

// Writer writes one event at a time. Engines call emit from one goroutine,
// so writers need no locking.
type Writer interface {
	Write(ev *probe.Event) error
	Flush() error
}

// monoToWall is wall-clock minus CLOCK_MONOTONIC, taken once, so that a
// monotonic event timestamp maps to wall-clock time cheaply.
func monoToWall() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return time.Duration(time.Now().UnixNano() - ts.Nano())
}

// New returns the writer for format on w: "text", "json", "perfetto"
// (Chrome trace-event JSON for ui.perfetto.dev), or a profile of calls by
// stack written at the end (IsProfile): "pprof", "folded" (flamegraph.pl's
// input) or "flamegraph" (an SVG).
func New(format string, w io.Writer, o Options) (Writer, error) {
	switch format {
	case "", "text":
		return newText(w, o), nil
	case "json":
		return newJSON(w), nil
	case "perfetto":
		return newPerfetto(w, o), nil
	case "pprof", "folded", "flamegraph":
		return newFlame(format, w, o), nil
	}
	return nil, &FormatError{Format: format}
}

// FormatError names an output format utap does not know.
type FormatError struct{ Format string }

func (e *FormatError) Error() string {
	return "unknown output format \"" + e.Format + "\" (use text, json, perfetto, pprof, folded or flamegraph)"
}

// IsProfile says whether format is a profile of calls by user stack: its
// events need stacks (-k), and it is written when the trace ends.
func IsProfile(format string) bool {
	return format == "pprof" || format == "folded" || format == "flamegraph"
}
