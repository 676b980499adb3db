package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/utap/utap/probe"
	"golang.org/x/sys/unix"
)

func events() []*probe.Event {
	return []*probe.Event{
		{TimeNs: 1, PID: 10, TID: 11, Probe: "work(arg1, arg2:x)", Func: "work", Kind: "entry",
			Args: []probe.Value{{Int: uint64(1<<64 - 3), Signed: true}, {Int: 255, Format: probe.FormatHex}}},
		{TimeNs: 2, PID: 10, TID: 10, Probe: "libc:open(str(arg1))", Func: "open", Kind: "entry",
			Args: []probe.Value{{Str: "/etc/pa\"ss\x00wd\n", IsStr: true}, {Err: true}}},
		{TimeNs: 3, PID: 10, TID: 10, Probe: "return:work", Func: "work", Kind: "return",
			Ret: &probe.Value{Int: 4, Signed: true}, DurationNs: 12000},
	}
}

func write(t *testing.T, format string, o Options) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := New(format, &buf, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events() {
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestText(t *testing.T) {
	got := write(t, "text", Options{Durations: true})
	want := `[pid 11] work(-3, 0xff)
[pid 10] open("/etc/pa\"ss\0wd\n", ?)
[pid 10] work() = 4 <0.000012>
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestTextStrLenAndWallClock(t *testing.T) {
	got := write(t, "text", Options{StrLen: 4, WallClock: true})
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if !strings.Contains(lines[1], `open("/etc"..., ?)`) {
		t.Errorf("-s 4 not applied: %q", lines[1])
	}
	if !regexp.MustCompile(`^\[pid 11\] \d\d:\d\d:\d\d\.\d{6} work`).MatchString(lines[0]) {
		t.Errorf("-tt prefix missing: %q", lines[0])
	}
	if strings.Contains(lines[2], "<") {
		t.Errorf("duration shown without -T: %q", lines[2])
	}
}

// TestTextNoStrings: -s 0 shows no byte of a string, as strace does.
func TestTextNoStrings(t *testing.T) {
	got := write(t, "text", Options{StrLen: NoStrings})
	if !strings.Contains(got, `open(""..., ?)`) {
		t.Errorf("-s 0: %q", got)
	}
}

func TestJSONSchema(t *testing.T) {
	got := write(t, "json", Options{})
	keys := []string{"args", "duration_ns", "func", "kind", "pid", "probe", "ret", "tid", "time_ns"}
	var decoded []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("invalid JSON %q: %v", line, err)
		}
		var have []string
		for k := range m {
			have = append(have, k)
		}
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				t.Errorf("key %q missing in %s", k, line)
			}
		}
		if len(have) != len(keys) {
			t.Errorf("keys %v, want exactly %v", have, keys)
		}
		decoded = append(decoded, m)
	}
	if !reflect.DeepEqual(decoded[0]["args"], []any{-3.0, "0xff"}) {
		t.Errorf("args = %v", decoded[0]["args"])
	}
	if !reflect.DeepEqual(decoded[1]["args"], []any{"/etc/pa\"ss\x00wd\n", nil}) {
		t.Errorf("args = %#v", decoded[1]["args"])
	}
	if decoded[2]["ret"] != 4.0 || decoded[2]["duration_ns"] != 12000.0 || decoded[0]["ret"] != nil {
		t.Errorf("ret/duration wrong: %v", decoded)
	}
}

func TestUnknownFormat(t *testing.T) {
	if _, err := New("xml", &bytes.Buffer{}, Options{}); err == nil || !strings.Contains(err.Error(), "xml") {
		t.Errorf("err = %v", err)
	}
}

func BenchmarkText(b *testing.B) {
	w, _ := New("text", discard{}, Options{})
	ev := events()[0]
	for b.Loop() {
		_ = w.Write(ev)
	}
}

func BenchmarkJSON(b *testing.B) {
	w, _ := New("json", discard{}, Options{})
	ev := events()[0]
	for b.Loop() {
		_ = w.Write(ev)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestTextStrLenExact: a string of exactly -s bytes ends with "...", as
// ltrace shows it (it reads no more than -s bytes, so cannot tell).
func TestTextStrLenExact(t *testing.T) {
	ev := &probe.Event{PID: 1, TID: 1, Func: "puts", Kind: "entry",
		Args: []probe.Value{{IsStr: true, Str: "abcd"}, {IsStr: true, Str: "abc"}}}
	var b strings.Builder
	w, err := New("text", &b, Options{StrLen: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(ev); err != nil {
		t.Fatal(err)
	}
	End(w)
	if want := "[pid 1] puts(\"abcd\"..., \"abc\")\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// TestAppendHex: the hex appender against strconv, across digit counts.
func TestAppendHex(t *testing.T) {
	for _, u := range []uint64{0, 1, 0xf, 0x10, 0xff, 0x100, 0xfff, 0x1000, 0x7ffd9a15eace, ^uint64(0), 0x123456789abcdef0} {
		if got, want := string(appendHex(nil, u)), strconv.FormatUint(u, 16); got != want {
			t.Errorf("appendHex(%#x) = %s, want %s", u, got, want)
		}
	}
}

// TestJSONManyLines: lines past one buffer (written while the next fills)
// all arrive, in order, once flushed.
func TestJSONManyLines(t *testing.T) {
	var out bytes.Buffer
	w, err := New("json", &out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 5000 // about 12 buffers of 64 KiB
	for i := range n {
		ev := &probe.Event{TimeNs: int64(i), PID: 1, TID: 1, Probe: "work", Func: "work", Kind: "entry",
			Args: []probe.Value{{Int: uint64(i)}, {Int: 0x7ffd9a15eace, Format: probe.FormatPointer}}}
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("%d lines, want %d", len(lines), n)
	}
	for i, l := range lines {
		var v struct {
			TimeNs int64 `json:"time_ns"`
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil || v.TimeNs != int64(i) {
			t.Fatalf("line %d: %q (%v)", i, l, err)
		}
	}
}

// TestMsDigits: times written from kept milliseconds, as strconv would.
func TestMsDigits(t *testing.T) {
	var m msDigits
	for _, ns := range []int64{0, 7, 999999, 1000000, 1000001, 6043645912842, 6043645920125, 6043646000000, 6043645000009, -5, 9223372036854775807} {
		if got, want := string(m.append(nil, ns)), strconv.FormatInt(ns, 10); got != want {
			t.Errorf("%d: %s", ns, got)
		}
	}
}

// TestJSONValuesValid: every kind of value makes valid JSON (an
// untyped argument over 10000 was a bare 0x7ffd... before).
func TestJSONValuesValid(t *testing.T) {
	ev := &probe.Event{PID: 1, TID: 1, Func: "f", Kind: "entry", Args: []probe.Value{
		{Int: 0x7ffd9a15eace, Format: probe.FormatGuess}, {Int: 42, Format: probe.FormatGuess},
		{Int: 3, Name: "SIGQUIT"}, {Int: 1, Format: probe.FormatBool}, {Int: 8, Format: probe.FormatOctal},
		{Int: 'a', Format: probe.FormatChar}, {Int: ^uint64(0), Format: probe.FormatDec}, {Int: 7, Format: probe.FormatUnsigned},
		{Str: "\x02\x10", IsStr: true, Format: probe.FormatBitvec}, {Str: "ab\x00cd", IsStr: true, Format: probe.FormatCStr},
	}}
	var b strings.Builder
	w, err := New("json", &b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(ev); err != nil {
		t.Fatal(err)
	}
	End(w)
	var m map[string]any
	if err := json.Unmarshal([]byte(b.String()), &m); err != nil {
		t.Fatalf("%v: %s", err, b.String())
	}
	want := []any{"0x7ffd9a15eace", 42.0, "SIGQUIT", true, 8.0, 97.0, -1.0, 7.0, []any{1.0, 12.0}, "ab"}
	if got := m["args"].([]any); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("args %v, want %v", got, want)
	}
}

// BenchmarkTextSyscall: a strace line of a call without arguments (the
// getppid loop of #26's target), and one with a path and flags.
func BenchmarkTextSyscall(b *testing.B) {
	w, _ := New("text", discard{}, Options{})
	for _, c := range []struct {
		name string
		sys  probe.Syscall
	}{
		{"getppid", probe.Syscall{Nr: unix.SYS_GETPPID, Ret: 26641, Returned: true}},
		{"openat", probe.Syscall{Nr: unix.SYS_OPENAT, Args: [6]uint64{0xffffff9c, 0x1000, unix.O_RDONLY | unix.O_CLOEXEC}, Ret: 3, Returned: true,
			Entry: [][]byte{[]byte("/etc/ld.so.cache\x00")}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			ev := &probe.Event{Kind: "return", PID: 1, TID: 1, Func: c.name, Sys: &c.sys}
			for b.Loop() {
				_ = w.Write(ev)
			}
		})
	}
}

// TestPlainRun: the run of plain bytes found eight at a time ends where
// the byte-by-byte table says, for every byte value at every place of a
// run as long as two words and a tail.
func TestPlainRun(t *testing.T) {
	for c := 0; c < 256; c++ {
		for at := 0; at < 19; at++ {
			b := []byte("abcdefghijklmnopqrs")
			b[at] = byte(c)
			want := 0
			for want < len(b) && plain[b[want]] {
				want++
			}
			for from := 0; from <= want; from++ {
				if got := plainRun(string(b), from); got != want {
					t.Fatalf("plainRun(%q, %d) = %d, want %d", b, from, got, want)
				}
			}
		}
	}
}

// TestQuoteRuns: quote's runs of plain bytes give what quoting byte by
// byte gives, for every byte value around them, cut or not.
func TestQuoteRuns(t *testing.T) {
	ref := func(s string, n int) string {
		out := `"`
		for i := 0; i < len(s) && i < n; i++ {
			out += string(quote(nil, s[i:i+1], 1))[1:][:len(quote(nil, s[i:i+1], 1))-2]
		}
		out += `"`
		if len(s) > n {
			out += "..."
		}
		return out
	}
	for c := 0; c < 256; c++ {
		for _, s := range []string{string(rune(0)) + "ab", "ab" + string([]byte{byte(c)}) + "cd", string([]byte{byte(c), byte(c)}), "plain/path"} {
			for _, n := range []int{1, 3, 32} {
				if got, want := string(quote(nil, s, n)), ref(s, n); got != want {
					t.Fatalf("quote(%q, %d) = %s, want %s", s, n, got, want)
				}
			}
		}
	}
}

// BenchmarkQuote: a path as a str() trace shows it.
func BenchmarkQuote(b *testing.B) {
	var buf []byte
	for i := 0; i < b.N; i++ {
		buf = quote(buf[:0], "/usr/lib/x86_64-linux-gnu/libc.so.6", 32)
	}
}
