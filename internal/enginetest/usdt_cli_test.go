//go:build linux && amd64

package enginetest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/utap/utap/internal/need"
)

const python311 = "/usr/bin/python3.11"

// TestCLIUSDTPythonCounts: Python's static probes counted by utap on both
// engines (--count-only) and by bpftrace's usdt: on the same script are
// equal. function__entry fires at every call only while the line probe is
// enabled too (CPython 3.11 takes its tracing path then), so both sets
// are counted.
func TestCLIUSDTPythonCounts(t *testing.T) {
	if _, err := os.Stat(python311); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: %v (.ci/run installs python3.11-minimal)", python311, err)
		}
		t.Skipf("%s: %v", python311, err)
	}
	script := filepath.Join(t.TempDir(), "f.py")
	os.WriteFile(script, []byte("import gc\ndef f(x):\n    return x + 1\nfor i in range(100):\n    f(i)\ngc.collect()\n"), 0o644)
	for _, probes := range [][]string{
		{"function__entry"},
		{"function__entry", "line", "gc__start"},
	} {
		want := bpftraceCounts(t, probes, python311, script)
		for _, b := range backends {
			t.Run(strings.Join(probes, ",")+"/"+b.name, func(t *testing.T) {
				b.need(t)
				args := []string{"run", "--backend", b.name, "-q", "--count-only", "--format", "json"}
				for _, p := range probes {
					args = append(args, "-e", "usdt:python:"+p)
				}
				r := utap(t, append(args, "--", python311, script)...)
				if r.code != 0 {
					t.Fatalf("exit %d: %s", r.code, r.stderr)
				}
				var rep struct {
					Functions []struct {
						Function string
						Calls    uint64
					}
				}
				if err := json.Unmarshal([]byte(r.stderr), &rep); err != nil {
					t.Fatalf("%v: %q", err, r.stderr)
				}
				got := map[string]uint64{}
				for _, f := range rep.Functions {
					got[strings.TrimPrefix(f.Function, "python:")] = f.Calls
				}
				for _, p := range probes {
					if want != nil && got[p] != want[p] {
						t.Errorf("%s: utap %d, bpftrace %d", p, got[p], want[p])
					}
					if got[p] == 0 {
						t.Errorf("%s: no call counted", p)
					}
				}
				t.Logf("%v", got)
			})
		}
	}
}

// bpftraceCounts counts each probe with bpftrace's usdt: over one run of
// argv (nil without bpftrace, outside CI).
func bpftraceCounts(t *testing.T, probes []string, argv ...string) map[string]uint64 {
	t.Helper()
	if _, err := exec.LookPath("bpftrace"); err != nil {
		need.Tool(t, "bpftrace") // fails under CI
		return nil
	}
	need.Uprobes(t)
	var prog strings.Builder
	for _, p := range probes {
		fmt.Fprintf(&prog, "usdt:%s:python:%s { @%s = count(); } ", argv[0], p, p)
	}
	out, err := exec.Command("bpftrace", "-e", prog.String(), "-c", strings.Join(argv, " ")).CombinedOutput()
	if err != nil {
		t.Fatalf("bpftrace: %v: %s", err, out)
	}
	counts := map[string]uint64{}
	for _, m := range regexp.MustCompile(`@(\w+): (\d+)`).FindAllStringSubmatch(string(out), -1) {
		counts[m[1]], _ = strconv.ParseUint(m[2], 10, 64)
	}
	return counts
}
