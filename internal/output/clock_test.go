package output

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/utap/utap/probe"
)

// TestTextClocks: -t, -ttt and -r stamp each line as ltrace does, after
// the thread (as ltrace and strace write it); -i adds the address after
// them.
func TestTextClocks(t *testing.T) {
	addr := func(ev *probe.Event) (uint64, bool) {
		if ev.Func == "work" {
			return 0x1139, true
		}
		return 0, false
	}
	for _, c := range []struct {
		name string
		o    Options
		want []string // a regexp per line
	}{
		{"-t", Options{Clock: ClockTimeOfDay}, []string{`^\[pid 11\] \d\d:\d\d:\d\d work\(`, `^\[pid 10\] \d\d:\d\d:\d\d open\(`, `^\[pid 10\] \d\d:\d\d:\d\d work\(`}},
		{"-tt", Options{WallClock: true, Clock: ClockTimeOfDay}, []string{`^\[pid 11\] \d\d:\d\d:\d\d\.\d{6} work`, `^\[pid 10\] \d\d:\d\d:\d\d\.\d{6} `, `^\[pid 10\] \d\d:\d\d:\d\d\.\d{6} `}},
		{"-ttt", Options{Clock: ClockEpoch}, []string{`^\[pid 11\] \d{10}\.\d{6} work`, `^\[pid 10\] \d{10}\.\d{6} `, `^\[pid 10\] \d{10}\.\d{6} `}},
		// events() are 1 ns apart
		{"-r", Options{Clock: ClockRelative}, []string{`^\[pid 11\]   0\.000000 work`, `^\[pid 10\]   0\.000000 open`, `^\[pid 10\]   0\.000000 work`}},
		{"-i -tt", Options{Addr: addr, WallClock: true}, []string{`^\[pid 11\] \d\d:\d\d:\d\d\.\d{6} \[0x1139\] work\(`, `^\[pid 10\] \d\d:\d\d:\d\d\.\d{6} open\(`, `^\[pid 10\] \d\d:\d\d:\d\d\.\d{6} \[0x1139\] work\(`}},
		{"-i", Options{Addr: addr}, []string{`^\[pid 11\] \[0x1139\] work\(`, `^\[pid 10\] open\(`, `^\[pid 10\] \[0x1139\] work\(`}},
	} {
		got := strings.Split(strings.TrimSuffix(write(t, "text", c.o), "\n"), "\n")
		if len(got) != len(c.want) {
			t.Errorf("%s: %d lines, want %d:\n%s", c.name, len(got), len(c.want), strings.Join(got, "\n"))
			continue
		}
		for i, re := range c.want {
			if !regexp.MustCompile(re).MatchString(got[i]) {
				t.Errorf("%s: line %q does not match %s", c.name, got[i], re)
			}
		}
	}
}

// TestTextRelative: -r is the time since the previous line.
func TestTextRelative(t *testing.T) {
	var b strings.Builder
	w := newText(&b, Options{Clock: ClockRelative})
	for _, ns := range []int64{5e9, 5e9 + 1500e3, 7e9 + 1500e3} {
		if err := w.Write(&probe.Event{TimeNs: ns, TID: 1, Func: "f", Kind: "entry"}); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	want := "[pid 1]   0.000000 f()\n[pid 1]   0.001500 f()\n[pid 1]   2.000000 f()\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestStampsAsFormatted: the stamps written by hand are what fmt and
// time format, across seconds, signs and widths.
func TestStampsAsFormatted(t *testing.T) {
	ns := []int64{0, 1, 999, 1_000_000_000, 1_700_000_000_123_456_789, 1_700_000_001_000_000_000, 1_700_000_059_999_999_999}
	for _, o := range []Options{{WallClock: true}, {Clock: ClockTimeOfDay}, {Clock: ClockEpoch}, {Clock: ClockRelative}} {
		tx := newText(io.Discard, o)
		tx.off = 0
		var last int64
		for _, n := range ns {
			var want string
			wall := time.Unix(0, n)
			switch {
			case o.Clock == ClockRelative:
				d := int64(0)
				if last != 0 {
					d = max(n-last, 0)
				}
				last = n
				want = fmt.Sprintf("%3d.%06d ", d/1e9, d%1e9/1e3)
			case o.Clock == ClockEpoch:
				want = fmt.Sprintf("%d.%06d ", wall.Unix(), wall.Nanosecond()/1e3)
			case o.WallClock:
				want = wall.Format("15:04:05.000000 ")
			default:
				want = wall.Format("15:04:05 ")
			}
			if got := string(tx.stamp(nil, n)); got != want {
				t.Errorf("%+v at %d: %q, want %q", o, n, got, want)
			}
		}
	}
	tx := newText(io.Discard, Options{Clock: ClockRelative})
	tx.stamp(nil, 1)
	if got := string(tx.stamp(nil, 1+123*1e9+456789)); got != "123.000456 " {
		t.Errorf("-r past 99 s: %q", got)
	}
}
