//go:build linux && amd64

package enginetest

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCLIStraceStyles: strace's -X raw and verbose, -e raw= and -e
// verbose=none, on both engines and on the stop path: the lines strace
// 6.1 prints for cat's openat and reads of /etc/hostname.
func TestCLIStraceStyles(t *testing.T) {
	modes := []struct {
		name string
		args []string
		need func(testing.TB)
	}{
		{"ptrace", []string{"--backend", "ptrace"}, backends[0].need},
		{"ptrace_stops", []string{"--backend", "ptrace", "--no-pads"}, backends[0].need},
		{"uprobe", []string{"--backend", "uprobe"}, backends[1].need},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			m.need(t)
			out := filepath.Join(t.TempDir(), "out")
			for _, c := range []struct {
				args []string
				want string
			}{
				{[]string{"-X", "raw"}, `openat(-100, "/etc/hostname", 0) = 3`},
				{[]string{"-X", "verbose"}, `openat(-100 /* AT_FDCWD */, "/etc/hostname", 0 /* O_RDONLY */) = 3`},
				{[]string{"-X", "abbrev"}, `openat(AT_FDCWD, "/etc/hostname", O_RDONLY) = 3`},
				{[]string{"-e", "raw=read"}, `read(0x3, 0x`},
				{[]string{"-e", "raw=all"}, `openat(0xffffff9c, 0x`},
			} {
				a := append(append([]string{"run", "-q", "-o", out}, m.args...), c.args...)
				r := utap(t, append(a, "-e", "trace=openat,read", "--", "cat", "/etc/hostname")...)
				if r.code != 0 {
					t.Fatalf("%q: exit %d: %s", c.args, r.code, r.stderr)
				}
				var lines []string // strace's column before " = " closed up
				for _, l := range strings.Split(fileText(out).String(), "\n") {
					lines = append(lines, strings.Join(strings.Fields(l), " "))
				}
				if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, c.want) }) {
					t.Errorf("%q: no line %q in\n%s", c.args, c.want, strings.Join(lines, "\n"))
				}
			}
			// -e verbose=none: structures as addresses.
			r := utap(t, append(append([]string{"run", "-q", "-o", out}, m.args...), "-e", "verbose=none", "-e", "trace=fstat,newfstatat", "--", "cat", "/etc/hostname")...)
			text := fileText(out).String()
			if r.code != 0 || strings.Contains(text, "st_mode") || !regexpMatch(`stat\w*\(\d+, "", 0x[0-9a-f]+, `, text) {
				t.Errorf("-e verbose=none: exit %d\n%s%s", r.code, text, r.stderr)
			}
		})
	}
	oneErrorLine(t, utap(t, "run", "-X", "names", "-e", "trace=openat", "--", "true"), "-X names", "abbrev, raw or verbose")
	oneErrorLine(t, utap(t, "run", "-e", "raw=no_such_call", "-e", "trace=openat", "--", "true"), "raw=no_such_call")
}
