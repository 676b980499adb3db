//go:build linux && amd64

package main

import (
	"encoding/binary"
	"fmt"
	"os/user"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"
	"github.com/utap/utap/internal/output"
	"github.com/utap/utap/internal/syscalls"
	"github.com/utap/utap/probe"
	"golang.org/x/sys/unix"
)

// strace's qualifiers beyond trace= (-e status=, -e signal=, -z, -Z) and
// the flags a strace command line carries that need nothing of utap
// (--seccomp-bpf) or that utap does not do yet, refused in one line:
// never ignored.

// straceMoreFlags are strace's flags besides -S and -y.
func straceMoreFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "successful-only", Aliases: []string{"z"}, Usage: "show only system calls that succeeded (strace -z, -e status=successful)"},
		&cli.BoolFlag{Name: "failed-only", Aliases: []string{"Z"}, Usage: "show only system calls that failed (strace -Z, -e status=failed)"},
		&cli.BoolFlag{Name: "seccomp-bpf", Usage: "accepted for strace's command lines: the ptrace engine filters with seccomp in run mode by default (--no-seccomp to stop), the uprobe engine needs none"},
		&cli.BoolFlag{Name: "yy", Usage: "strace's -yy: as -y; a socket shows as the kernel names it, socket:[INODE] (its addresses are not decoded)"},
		&cli.IntFlag{Name: "w", Usage: "ltrace's -w `N`: the user stack of each call, N frames (as -k --stack-depth N)"},
		&cli.StringFlag{Name: "X", Usage: "strace's -X `FORMAT`, how system calls' constant arguments show: abbrev (names, the default), raw (numbers), verbose (numbers, names in a comment); constants inside structures keep their names"},
		&cli.StringSliceFlag{Name: "P", Usage: "strace's -P `PATH` (repeatable): show only the system calls that name PATH, as a path argument or a file descriptor open on it"},
		&cli.BoolFlag{Name: "no-abbrev", Usage: "strace's -v (utap's -v is its own notices): structures unabbreviated, every field, and execve's environment as strings (-e abbrev=none)"},
		&cli.BoolFlag{Name: "xx", Usage: "strace's -xx: every string and buffer of a system call in hex (\\x2f\\x65...)"},
		&cli.IntFlag{Name: "a", Value: 40, Usage: "strace's -a `COLUMN`: align system calls' results at COLUMN (0: not aligned)"},
		&cli.BoolFlag{Name: "b", Aliases: []string{"no-signals"}, Usage: "ltrace's -b: no signal lines (-e signal=none); strace's -b execve is not supported"},
		&cli.BoolFlag{Name: "qq", Usage: "strace's -qq: no +++ exited +++ lines (-e quiet=exit)"},
		&cli.StringFlag{Name: "u", Usage: "strace's -u `USER`: run the command as USER (name or uid), with its group and supplementary groups; utap stays root"},
		&cli.BoolFlag{Name: "Y", Usage: "strace's -Y (--decode-pids=comm): each thread's name after its id, [pid N<comm>]"},
		&cli.BoolFlag{Name: "always-show-pid", Usage: "strace's --always-show-pid: [pid N] before every system call line, one process or not"},
		&cli.IntFlag{Name: "A", Usage: "ltrace's -A `N`, the elements of an array shown: accepted, and changes nothing, as in ltrace with its stock ltrace.conf (its only arrays are strings, which -s cuts)"},
	}
}

// ltraceArrayNote says, unless -q, that -A changes nothing: ltrace.conf's
// arrays are all strings (string(array(char, argN)*)), cut by -s, and
// utap shows no other arrays; ltrace with that file prints the same.
func ltraceArrayNote(c *cli.Context, info func(string)) {
	if c.IsSet("A") && info != nil {
		info(fmt.Sprintf("-A %d: no arrays to cut (ltrace.conf's arrays are strings, which -s cuts)", c.Int("A")))
	}
}

// statusFlags is the filter of -z and -Z, and what the refused flags say.
func statusFlags(c *cli.Context) (*eventFilter, error) {
	f := &eventFilter{}
	f.setPaths(c.StringSlice("P"))
	if c.IsSet("X") {
		x, err := syscalls.ParseXlat(c.String("X"))
		if err != nil {
			return nil, err
		}
		f.sys.Xlat = x
	}
	if c.Bool("no-abbrev") {
		f.sys.Full = func(int) bool { return true }
	}
	f.sys.Hex, f.quietExit, f.sys.Comm = c.Bool("xx"), c.Bool("qq"), c.Bool("Y")
	if c.Bool("b") {
		if c.Args().First() == "execve" {
			return nil, fmt.Errorf("-b execve: strace's detach at exec is not supported by utap (ltrace's -b, no signal lines, takes no value)")
		}
		if err := f.setSignals("none"); err != nil {
			return nil, err
		}
	}
	if c.IsSet("a") {
		if c.Int("a") < 0 {
			return nil, fmt.Errorf("-a %d: a column is 0 or more", c.Int("a"))
		}
		f.sys.Column = c.Int("a")
		if f.sys.Column == 0 {
			f.sys.Column = -1 // no alignment
		}
	}
	switch {
	case c.Bool("z") && c.Bool("Z"):
		return nil, fmt.Errorf("-z shows only calls that succeeded, -Z only those that failed: give one")
	case c.Bool("z"):
		return f, f.setStatus("successful")
	case c.Bool("Z"):
		return f, f.setStatus("failed")
	}
	return f, nil
}

// eventFilter is strace's status= and signal= sets: which system-call and
// signal lines are written. nil sets keep every line.
type eventFilter struct {
	status  map[string]bool // successful, failed, unfinished
	signals map[int]bool
	paths   map[string]bool   // -P: the paths, as given and resolved (tracepath.go)
	fds     map[[2]int]string // -P: pid and fd → the path it is open on ("" closed)
	sys     output.SysStyle   // -X, -e raw=, -e verbose=
	// quietExit drops the +++ exited +++ lines (-qq, -e quiet=exit).
	quietExit bool
}

// qualifier takes strace's -e NAME=VALUE qualifiers other than trace=;
// ok is false for a probe spec.
func (f *eventFilter) qualifier(text string) (ok bool, err error) {
	name, val, found := strings.Cut(text, "=")
	if !found || strings.ContainsAny(name, " (:") {
		return false, nil
	}
	switch name {
	case "status":
		return true, f.setStatus(val)
	case "signal", "signals", "s":
		return true, f.setSignals(val)
	case "raw", "x":
		f.sys.Raw, err = callSet(name, val)
		return true, err
	case "verbose", "v":
		verbose, err := callSet(name, val)
		f.sys.Terse = func(nr int) bool { return !verbose(nr) }
		return true, err
	case "abbrev", "a":
		abbrev, err := callSet(name, val)
		f.sys.Full = func(nr int) bool { return !abbrev(nr) }
		return true, err
	case "read", "reads", "r":
		f.sys.DumpRead, err = fdSet(name, val)
		return true, err
	case "write", "writes", "w":
		f.sys.DumpWrite, err = fdSet(name, val)
		return true, err
	case "quiet", "q", "silent", "silence":
		return true, f.setQuiet(val)
	case "fault", "inject", "kvm", "decode-fds", "decode-pids":
		return true, fmt.Errorf("-e %s: strace's -e %s= is not supported by utap", text, name)
	}
	return false, nil
}

// environments has execve's environment and getdents' entries captured
// whole where their lines show them so (-e abbrev=none, --no-abbrev).
func (f *eventFilter) environments() {
	if full := f.sys.Full; full != nil && (full(unix.SYS_EXECVE) || full(unix.SYS_EXECVEAT)) {
		syscalls.ShowEnvironments()
	}
	if full := f.sys.Full; full != nil && (full(unix.SYS_GETDENTS64) || full(unix.SYS_GETDENTS)) {
		syscalls.ShowDirents()
	}
}

// fdSet is -e read= and -e write='s set of fds (all, none, numbers, !
// before them for the others) as a test.
func fdSet(q, val string) (func(int) bool, error) {
	return qualSet(val, func(body string, set map[int]bool) error {
		for _, s := range strings.Split(body, ",") {
			fd, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || fd < 0 {
				return fmt.Errorf("-e %s=%s: %q is not a file descriptor (numbers, all or none)", q, val, s)
			}
			set[fd] = true
		}
		return nil
	})
}

// qualSet is a qualifier's set: all, none, or what add puts in set from
// the text, ! before any of them for the others; as a test.
func qualSet(val string, add func(body string, set map[int]bool) error) (func(int) bool, error) {
	body, neg := strings.CutPrefix(val, "!")
	set, all := map[int]bool{}, false
	switch body {
	case "all":
		all = true
	case "none":
	default:
		if err := add(body, set); err != nil {
			return nil, err
		}
	}
	return func(n int) bool { return (all || set[n]) != neg }, nil
}

// dumpCapture is the bytes of a buffer the engines read when its data is
// dumped (-e read=, -e write=), whatever -s shows of it: strace dumps it
// all. The kernel engine reads 8 KiB at most; the dump says what is left.
const dumpCapture = 1 << 20

// captureSize is the engines' string and buffer limit for -s s.
func (f *eventFilter) captureSize(s int) int {
	if f.sys.DumpRead == nil && f.sys.DumpWrite == nil {
		return s
	}
	return max(s, dumpCapture)
}

// callSet is a qualifier's set of system calls (all, none, or a list as
// trace= takes it, ! before it for the others) as a test by number.
func callSet(q, val string) (func(int) bool, error) {
	return qualSet(val, func(body string, set map[int]bool) error {
		infos, err := syscalls.Select(body)
		if err != nil {
			return fmt.Errorf("-e %s=%s: %w", q, val, err)
		}
		for _, in := range infos {
			set[in.Nr] = true
		}
		return nil
	})
}

func (f *eventFilter) setStatus(val string) error {
	f.status = map[string]bool{}
	neg := strings.HasPrefix(val, "!")
	all := []string{"successful", "failed", "unfinished", "unavailable", "detached"}
	set := map[string]bool{}
	for _, s := range strings.Split(strings.TrimPrefix(val, "!"), ",") {
		switch s {
		case "all":
			for _, a := range all {
				set[a] = true
			}
		case "none":
		case "successful", "failed", "unfinished", "unavailable", "detached":
			set[s] = true
		default:
			return fmt.Errorf("-e status=%s: unknown status %q (successful, failed, unfinished, unavailable, detached, all, none)", val, s)
		}
	}
	for _, a := range all {
		f.status[a] = set[a] != neg
	}
	return nil
}

func (f *eventFilter) setSignals(val string) error {
	neg := strings.HasPrefix(val, "!")
	set := map[int]bool{}
	for _, s := range strings.Split(strings.TrimPrefix(val, "!"), ",") {
		switch s = strings.TrimSpace(s); {
		case s == "all":
			for n := 1; n < 65; n++ {
				set[n] = true
			}
		case s == "none":
		default:
			n := signalNumber(s)
			if n == 0 {
				return fmt.Errorf("-e signal=%s: unknown signal %q", val, s)
			}
			set[n] = true
		}
	}
	f.signals = map[int]bool{}
	for n := 1; n < 65; n++ {
		f.signals[n] = set[n] != neg
	}
	return nil
}

// signalNumber reads SIGHUP, HUP, hup or 1; 0 if none.
func signalNumber(s string) int {
	if n, err := strconv.Atoi(s); err == nil && n > 0 && n < 65 {
		return n
	}
	name := strings.ToUpper(s)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	return int(unix.SignalNum(name))
}

// keep says whether ev's line is written.
func (f *eventFilter) keep(ev *probe.Event) bool {
	switch {
	case ev.Kind == "exit" && f.quietExit:
		return false
	case ev.Sys != nil && f.paths != nil && !f.touches(ev):
		return false
	case ev.Sys != nil && f.status != nil:
		return f.status[callStatus(ev.Sys)]
	case ev.Kind == "signal" && f.signals != nil && len(ev.Signal) >= 4:
		return f.signals[int(binary.LittleEndian.Uint32(ev.Signal))]
	}
	return true
}

func callStatus(s *probe.Syscall) string {
	switch {
	case s.Detached:
		return "detached"
	case !s.Returned:
		return "unfinished"
	case s.Ret < 0 && s.Ret >= -4095:
		return "failed"
	}
	return "successful"
}

// none says the filter keeps every event.
func (f *eventFilter) none() bool {
	return f.status == nil && f.signals == nil && f.paths == nil && !f.quietExit
}

// setQuiet takes -e quiet=: exit (its +++ exited +++ lines) is utap's
// to drop; strace's other messages (attach, path-resolution,
// personality, thread-execve, superseded) utap does not print.
func (f *eventFilter) setQuiet(val string) error {
	known := []string{"attach", "exit", "exits", "path-resolution", "personality", "thread-execve", "superseded"}
	neg := strings.HasPrefix(val, "!")
	for _, s := range strings.Split(strings.TrimPrefix(val, "!"), ",") {
		switch s = strings.TrimSpace(s); {
		case s == "all" || s == "exit" || s == "exits":
			f.quietExit = !neg
		case s == "none":
			f.quietExit = neg
		case !slices.Contains(known, s):
			return fmt.Errorf("-e quiet=%s: unknown message %q (%s, all, none)", val, s, strings.Join(known, ", "))
		}
	}
	return nil
}

// filtered applies f to emit, nil when nothing is filtered.
func (f *eventFilter) filtered(emit func(*probe.Event)) func(*probe.Event) {
	if f.none() {
		return emit
	}
	return probe.Unpaired(func(ev *probe.Event) {
		if f.keep(ev) {
			emit(ev)
		}
	})
}

// straceNames expands one name of a trace= list: /REGEX (every call whose
// name it matches) and ?NAME (no error if the call is unknown here).
func straceNames(name string) ([]string, error) {
	if re, ok := strings.CutPrefix(name, "/"); ok {
		rx, err := regexp.Compile(re)
		if err != nil {
			return nil, fmt.Errorf("-e trace=/%s: %w", re, err)
		}
		all, _ := syscalls.Select("*")
		var out []string
		for _, in := range all {
			if rx.MatchString(in.Name) {
				out = append(out, in.Name)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("-e trace=/%s: no system call matches", re)
		}
		return out, nil
	}
	if q, ok := strings.CutPrefix(name, "?"); ok {
		if _, err := syscalls.Select(q); err != nil {
			return nil, nil
		}
		return []string{q}, nil
	}
	return []string{name}, nil
}

// userCred is -u USER's credentials (strace -u): its uid, its primary
// group and the groups it is a member of; nil without -u.
func userCred(name string) (*syscall.Credential, error) {
	if name == "" {
		return nil, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		var uerr error
		if u, uerr = user.LookupId(name); uerr != nil {
			return nil, fmt.Errorf("-u %s: no such user (a name or uid of /etc/passwd)", name)
		}
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("-u %s: uid %q, gid %q are not numbers", name, u.Uid, u.Gid)
	}
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	ids, _ := u.GroupIds()
	for _, g := range ids {
		if n, err := strconv.ParseUint(g, 10, 32); err == nil {
			cred.Groups = append(cred.Groups, uint32(n))
		}
	}
	return cred, nil
}
