//go:build linux && amd64

package enginetest

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
)

// straceText runs strace -qq with args (its options, then the command)
// and returns its trace.
func straceText(t *testing.T, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "strace")
	if err := exec.Command("strace", append([]string{"-qq", "-o", out}, args...)...).Run(); err != nil {
		t.Fatalf("strace %q: %v", args, err)
	}
	return fileText(out).String()
}

// sysModes are the ways utap traces system calls: both engines, and the
// ptrace engine's stop path beside its in-process one.
var sysModes = []struct {
	name string
	args []string
	need func(testing.TB)
}{
	{"ptrace", []string{"--backend", "ptrace"}, backends[0].need},
	{"ptrace_stops", []string{"--backend", "ptrace", "--no-pads"}, backends[0].need},
	{"uprobe", []string{"--backend", "uprobe"}, backends[1].need},
}

// TestCLIStraceStyles: strace's -X raw and verbose, -e raw= and -e
// verbose=none, on both engines and on the stop path: the lines strace
// 6.1 prints for cat's openat and reads of /etc/hostname.
func TestCLIStraceStyles(t *testing.T) {
	for _, m := range sysModes {
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

// TestCLIStraceDump: -e read= and -e write= dump the data of reads and
// writes (plain and vectored) line for line as strace does, on both
// engines and the stop path; an fd outside the set is not dumped.
func TestCLIStraceDump(t *testing.T) {
	need.Tool(t, "strace")
	bin := fixture.C(t, "sys_more.c")
	dumps := func(text string) []string {
		var out []string
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, " | ") || strings.HasPrefix(l, " * ") {
				out = append(out, l)
			}
		}
		return out
	}
	sel := []string{"-e", "trace=read,write,readv,writev,preadv2,pwritev", "-e", "read=all", "-e", "write=!1,2"}
	want := dumps(straceText(t, append(append([]string{"-f"}, sel...), bin)...))
	if len(want) < 4 {
		t.Fatalf("strace dumped %d lines", len(want))
	}
	for _, m := range sysModes {
		t.Run(m.name, func(t *testing.T) {
			m.need(t)
			out := filepath.Join(t.TempDir(), "out")
			a := append(append([]string{"run", "-f", "-q", "-o", out}, m.args...), sel...)
			r := utap(t, append(a, "--", bin)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			// The kernel engine's cap on a capture is said, not silent.
			if capped := strings.Contains(r.stderr, "captured up to 8192 bytes"); capped != (m.name == "uprobe") {
				t.Errorf("stderr %q", r.stderr)
			}
			if got := dumps(fileText(out).String()); !slices.Equal(got, want) {
				t.Errorf("dump lines:\n%s\nstrace's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
	oneErrorLine(t, utap(t, "run", "-e", "read=x", "-e", "trace=read", "--", "true"), "read=x", "file descriptor")
}

// TestCLIStraceNoAbbrev: -e abbrev=none and --no-abbrev (strace -v) show
// structures whole, as strace 6.1 does: termios with its c_cc, struct
// stat, utsname, getdents64's entries and execve's environment, on both
// engines and the stop path.
func TestCLIStraceNoAbbrev(t *testing.T) {
	need.Tool(t, "strace")
	bin := fixture.C(t, "sys_full.c")
	dir := t.TempDir()
	for _, n := range []string{"a", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"} {
		if err := exec.Command("touch", filepath.Join(dir, n)).Run(); err != nil {
			t.Fatal(err)
		}
	}
	sel := "trace=ioctl,fstat,newfstatat,uname,getdents64,execve"
	// The first execve's environment is the test's own, and utap's
	// run differs from strace's there: only the lines after it count.
	// The directory's access time moves with each run that lists it.
	atime := regexp.MustCompile(`st_atime=\d+ /\* [^*]* \*/, st_atime_nsec=\d+`)
	lines := func(text string) []string {
		var out []string
		for i, l := range strings.Split(strings.TrimSpace(text), "\n") {
			if i > 0 && !strings.HasPrefix(l, "+++") {
				out = append(out, atime.ReplaceAllString(strings.Join(strings.Fields(l), " "), "st_atime=T"))
			}
		}
		return out
	}
	want := lines(straceText(t, "-v", "-e", sel, bin, dir))
	if !slices.ContainsFunc(want, func(l string) bool { return strings.Contains(l, "c_cc=[[VINTR]=0x3") }) ||
		!slices.ContainsFunc(want, func(l string) bool { return strings.Contains(l, `"A=1", "LONG=`) }) {
		t.Fatalf("strace -v printed:\n%s", strings.Join(want, "\n"))
	}
	for _, m := range sysModes {
		t.Run(m.name, func(t *testing.T) {
			m.need(t)
			for _, flag := range [][]string{{"-e", "abbrev=none"}, {"--no-abbrev"}} {
				out := filepath.Join(t.TempDir(), "out")
				a := append(append([]string{"run", "-q", "-o", out}, m.args...), flag...)
				r := utap(t, append(a, "-e", sel, "--", bin, dir)...)
				if r.code != 0 {
					t.Fatalf("%q: exit %d: %s", flag, r.code, r.stderr)
				}
				if got := lines(fileText(out).String()); !slices.Equal(got, want) {
					t.Errorf("%q:\n%s\nstrace -v's:\n%s", flag, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
		})
	}
}

// TestCLIStraceMsghdr: sendmsg's and recvmsg's struct msghdr, with its
// iovecs and an SCM_RIGHTS control message, as strace shows it, and the
// dumps of -e write= and -e read=, on both engines and the stop path.
func TestCLIStraceMsghdr(t *testing.T) {
	need.Tool(t, "strace")
	bin := fixture.C(t, "sys_msg.c")
	lines := func(text string) []string {
		var out []string
		for _, l := range strings.Split(text, "\n") {
			if strings.Contains(l, "msg(") || strings.HasPrefix(l, " | ") || strings.HasPrefix(l, " * ") {
				out = append(out, strings.Join(strings.Fields(l), " "))
			}
		}
		return out
	}
	sel := []string{"-e", "trace=sendmsg,recvmsg", "-e", "write=3", "-e", "read=4"}
	want := lines(straceText(t, append(sel, bin)...))
	if len(want) != 9 || !strings.Contains(want[3], "cmsg_type=SCM_RIGHTS") {
		t.Fatalf("strace printed:\n%s", strings.Join(want, "\n"))
	}
	for _, m := range sysModes {
		t.Run(m.name, func(t *testing.T) {
			m.need(t)
			out := filepath.Join(t.TempDir(), "out")
			a := append(append([]string{"run", "-q", "-o", out}, m.args...), sel...)
			r := utap(t, append(a, "--", bin)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			got, want := lines(fileText(out).String()), want
			if m.name == "uprobe" {
				// Read from user space after the call: a process gone
				// by then (a loaded machine) leaves the address, and
				// no dump.
				var kept []string
				for _, l := range want {
					if !strings.HasPrefix(l, "|") && !strings.HasPrefix(l, "*") {
						kept = append(kept, l)
					}
				}
				if !slices.ContainsFunc(got, func(l string) bool { return strings.HasPrefix(l, "|") }) {
					for i := range got {
						if i < len(kept) && regexpMatch(`msg\(\d+, 0x[0-9a-f]+, `, got[i]) {
							got[i] = kept[i]
						}
					}
					want = kept
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("got:\n%s\nstrace's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestCLIClone3ParentTid: clone3 shows what the kernel wrote through
// clone_args' parent_tid, " => {parent_tid=[TID]}", TID the call's result,
// as strace does, on both engines and the stop path.
func TestCLIClone3ParentTid(t *testing.T) {
	bin := fixture.C(t, "sys_clone3.c")
	line := regexp.MustCompile(`clone3\(\{flags=[^}]*CLONE_PARENT_SETTID[^}]*\} => \{parent_tid=(\[\d+\]|0x[0-9a-f]+)\}, 88\) += (\d+)`)
	for _, m := range sysModes {
		t.Run(m.name, func(t *testing.T) {
			m.need(t)
			out := filepath.Join(t.TempDir(), "out")
			r := utap(t, append(append([]string{"run", "-q", "-o", out}, m.args...), "-e", "trace=clone3", "--", bin)...)
			text := fileText(out).String()
			g := line.FindStringSubmatch(text)
			// The kernel engine reads the tid from user space after the
			// call: a process gone by then leaves the address.
			if r.code != 0 || g == nil || g[1] != "["+g[2]+"]" && !(m.name == "uprobe" && strings.HasPrefix(g[1], "0x")) {
				t.Errorf("exit %d:\n%s%s", r.code, text, r.stderr)
			}
		})
	}
}
