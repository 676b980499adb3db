//go:build linux && amd64

package enginetest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/utap/utap/internal/need"
)

// TestCLIPadsEveryLibcEntry probes every libc function that `utap list
// libc` marks as taking a pad, all at once, counted and then as events,
// over real commands: each command's output and exit status are those of
// its untraced run. On bb21bac a pad on memcpy or memmove killed any
// program calling mempcpy (which jumps to __memmove_*+3).
func TestCLIPadsEveryLibcEntry(t *testing.T) {
	need.Root(t)
	names := paddedLibc(t)
	if len(names) < 1000 {
		t.Fatalf("only %d padded libc entries listed", len(names))
	}
	dir := t.TempDir()
	sorted := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(sorted, []byte("pear\napple\nfig\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	py := "python3"
	if _, err := exec.LookPath(py); err != nil {
		py = "python3.11"
		need.Tool(t, py)
	}
	listed := filepath.Join(dir, "ls")
	if err := os.Mkdir(listed, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b.txt", "c"} {
		if err := os.WriteFile(filepath.Join(listed, n), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmds := [][]string{{"ls", "-l", listed}, {"date", "-u", "-d", "@86400"}, {"sort", sorted}, {py, "-c", "print(sum(range(10)))"}}
	specs := make([]string, 0, 2*len(names))
	for _, n := range names {
		specs = append(specs, "-e", "libc:"+n)
	}
	for _, mode := range []string{"--count-only", "--entry-only"} {
		for _, argv := range cmds {
			want, code := untraced(t, argv)
			args := append([]string{"run", "--backend", "ptrace", mode, "-o", filepath.Join(dir, "trace")}, specs...)
			r := utap(t, append(append(args, "--"), argv...)...)
			if r.stdout != want || r.code != code {
				t.Errorf("%s %q: exit %d, output %q; untraced exit %d, output %q\nstderr: %s",
					mode, argv, r.code, r.stdout, code, want, lastLines(r.stderr, 5))
			}
		}
	}
}

// paddedLibc lists the libc functions whose entries take a pad, one name
// per address.
func paddedLibc(t *testing.T) []string {
	r := utap(t, "list", "--format", "json", "libc")
	if r.code != 0 {
		t.Fatalf("utap list libc: %s", r.stderr)
	}
	byAddr := map[uint64]string{}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var s struct {
			Object, Name, Kind string
			Addr               uint64
			Pad                bool
		}
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatalf("utap list: %v: %q", err, l)
		}
		if !s.Pad || s.Kind != "func" || !strings.HasSuffix(s.Object, "/libc.so.6") || strings.Contains(s.Name, "@") {
			continue
		}
		if old, ok := byAddr[s.Addr]; !ok || plainer(s.Name, old) {
			byAddr[s.Addr] = s.Name
		}
	}
	out := make([]string, 0, len(byAddr))
	for _, n := range byAddr {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// plainer prefers a name without glibc's internal __GI_ prefix, then
// fewer leading underscores, then shorter: the name a user would type.
func plainer(a, b string) bool {
	ga, gb := strings.HasPrefix(a, "__GI_"), strings.HasPrefix(b, "__GI_")
	if ga != gb {
		return gb
	}
	ua, ub := len(a)-len(strings.TrimLeft(a, "_")), len(b)-len(strings.TrimLeft(b, "_"))
	if ua != ub {
		return ua < ub
	}
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}
