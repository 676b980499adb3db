//go:build linux && amd64

package enginetest

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
)

// TestCLIUSDTParity: every static probe of the USDT fixtures, through the
// resolver and the CLI, gives the same event lines on both engines — a PIE,
// a non-PIE executable, a shared library whose probes have semaphores, a
// provider:name at two places, a probe guarded by a semaphore — and the
// program's output shows the guarded code ran while traced only.
func TestCLIUSDTParity(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "lib", "libusdt_lib.so")
	gccOut(t, lib, "-shared", "-fPIC", "-g", "-O1", fixture.Source(t, "usdt_lib.c"))
	withLib := filepath.Join(dir, "usdt_main")
	gccOut(t, withLib, "-g", "-O1", "-DUSDT_LIB", fixture.Source(t, "usdt_fixture.c"),
		"-L"+filepath.Dir(lib), "-lusdt_lib", "-Wl,-rpath,$ORIGIN/lib")
	for _, c := range []struct {
		name  string
		bin   string
		specs []string
	}{
		{"pie", fixture.C(t, "usdt_fixture.c", "-O1", "-g"), []string{"usdt:fixture:*"}},
		{"no-pie", fixture.C(t, "usdt_fixture.c", "-O1", "-g", "-no-pie"), []string{"usdt:fixture:*"}},
		{"library", withLib, []string{"usdt:libusdt_lib:usdtlib:*", "usdt:fixture:twice(arg1)", "usdt:fixture:guarded"}},
	} {
		untracedOut, _ := untraced(t, []string{c.bin, "4"})
		got := map[string]string{}
		for _, b := range backends {
			t.Run(c.name+"/"+b.name, func(t *testing.T) {
				b.need(t)
				args := []string{"run", "--backend", b.name, "-q"}
				for _, s := range c.specs {
					args = append(args, "-e", s)
				}
				r := utap(t, append(args, "--", c.bin, "4")...)
				if r.code != 0 {
					t.Fatalf("exit %d: %s", r.code, r.stderr)
				}
				// The guarded branch ran 4 times traced, never untraced.
				if !strings.HasSuffix(strings.TrimSpace(untracedOut), " 0") || !strings.HasSuffix(strings.TrimSpace(r.stdout), " 4") {
					t.Errorf("guarded hits: untraced %q, traced %q", untracedOut, r.stdout)
				}
				got[b.name] = normalisePids(r.stderr)
			})
		}
		if p, u := got["ptrace"], got["uprobe"]; p != "" && u != "" && p != u {
			t.Errorf("%s: the engines differ:\nptrace:\n%s\nuprobe:\n%s", c.name, p, u)
		}
		t.Logf("%s:\n%s", c.name, got["ptrace"])
	}
}

var (
	pidField = regexp.MustCompile(`\[pid \d+\] `)
	number   = regexp.MustCompile(`\b\d{7,}\b`)
)

// normalisePids drops pids and turns user-space addresses (ASLR moves them
// between runs) into ADDR.
func normalisePids(s string) string {
	s = pidField.ReplaceAllString(s, "")
	return number.ReplaceAllStringFunc(s, func(n string) string {
		if v, err := strconv.ParseUint(n, 10, 64); err == nil && v >= 0x400000 && v < 1<<47 {
			return "ADDR"
		}
		return n
	})
}

func gccOut(t *testing.T, out string, args ...string) {
	t.Helper()
	if err := exec.Command("mkdir", "-p", filepath.Dir(out)).Run(); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("gcc", append([]string{"-o", out}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
}
