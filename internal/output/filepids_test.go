package output

import (
	"bytes"
	"strings"
	"testing"

	"github.com/utap/utap/probe"
)

// TestFilePIDs: into a file with -f, a pid starts a line as strace and
// ltrace write it there: "N " before a function's line (ltrace), five
// wide before a system call's (strace's "%-5d "), its alignment at
// strace's column counting it; "[pid N] " otherwise.
func TestFilePIDs(t *testing.T) {
	getpid := func(tid int) []probe.Event {
		return []probe.Event{
			{TID: tid, PID: tid, Func: "getpid", Kind: "entry", ProbeIndex: 1, Sys: &probe.Syscall{Nr: 39}},
			{TID: tid, PID: tid, Func: "getpid", Kind: "return", ProbeIndex: 1, Sys: &probe.Syscall{Nr: 39, Ret: int64(tid), Returned: true}},
		}
	}
	fn := probe.Event{TID: 123, PID: 123, Func: "getuid", Probe: "getuid", Kind: "entry", ProbeIndex: 0}
	for _, tc := range []struct {
		file bool
		want string
	}{
		{true, "123   getpid()                          = 123\n" +
			"1234567 getpid()                        = 1234567\n" +
			"123 getuid()\n"},
		{false, "[pid 123] getpid()                      = 123\n" +
			"[pid 1234567] getpid()                  = 1234567\n" +
			"[pid 123] getuid()\n"},
	} {
		var buf bytes.Buffer
		w, err := New("text", &buf, Options{StracePIDs: true, FilePIDs: tc.file})
		if err != nil {
			t.Fatal(err)
		}
		evs := append(append(getpid(123), getpid(1234567)...), fn)
		for i := range evs {
			if err := w.Write(&evs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := End(w); err != nil {
			t.Fatal(err)
		}
		if got := buf.String(); got != tc.want {
			t.Errorf("file %v:\n%s\nwant\n%s", tc.file, got, tc.want)
		}
		if tc.file && strings.Contains(buf.String(), "[pid") {
			t.Error("[pid N] in a file")
		}
	}
}
