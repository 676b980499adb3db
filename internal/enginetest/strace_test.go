//go:build linux && amd64

package enginetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
)

// The strace corpus: real commands traced by strace -f and by utap run -f
// -S on each engine. A line counts when strace itself prints it the same
// in two runs (after normalising addresses and pids): lines that differ
// from run to run (random bytes, times) say nothing about utap.

type corpusCmd struct {
	name string
	argv []string
}

func straceCorpus(t *testing.T, dir string) []corpusCmd {
	t.Helper()
	for name, body := range map[string]string{
		"a.txt": "pear\napple\nfig\n",
		"b.txt": strings.Repeat("utap strace corpus\n", 200),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := filepath.Join(dir, "repo")
	os.Mkdir(git, 0o755)
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.email", "u@t"}, {"config", "user.name", "u"}} {
		if out, err := exec.Command("git", append([]string{"-C", git}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(git, "f"), []byte("x\n"), 0o644)
	return []corpusCmd{
		{"ls -la", []string{"ls", "-la", dir}},
		{"cat", []string{"cat", filepath.Join(dir, "a.txt")}},
		{"sort", []string{"sort", filepath.Join(dir, "a.txt")}},
		{"tar", []string{"tar", "-cf", "/dev/null", "-C", dir, "a.txt", "b.txt"}},
		{"gzip", []string{"gzip", "-c", "-n", filepath.Join(dir, "b.txt")}},
		{"python3", []string{"/usr/bin/python3.11", "-S", "-c", "import os; print(os.getcwd() != '')"}},
		{"git status", []string{"git", "-C", git, "status", "--short"}},
		{"threads (C)", []string{fixture.C(t, "sys_calls.c")}},
		{"sockets, pipes, iovecs (C)", []string{fixture.C(t, "sys_more.c")}},
		// Added 2026-11-25, commands not used before.
		{"cp", []string{"cp", filepath.Join(dir, "a.txt"), "/dev/null"}},
		{"find", []string{"find", dir, "-maxdepth", "1", "-name", "*.txt"}},
		{"wc", []string{"wc", "-l", filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")}},
		{"stat", []string{"stat", "-c", "%n %s", filepath.Join(dir, "b.txt")}},
		{"sha256sum", []string{"sha256sum", filepath.Join(dir, "b.txt")}},
	}
}

var (
	traceLead    = regexp.MustCompile(`^(\[pid +\d+\] |\d+ +)`)
	straceAddr   = regexp.MustCompile(`0x[0-9a-f]+`)
	straceAlign  = regexp.MustCompile(`\) +=( |$)`)
	traceUnfin   = regexp.MustCompile(` ?<unfinished \.\.\.>$`)
	traceResumed = regexp.MustCompile(`^<\.\.\. (.+?) resumed> ?`)
)

// tracedLine is one line of a strace- or ltrace-format log, its pid
// prefix taken off and an unfinished call joined with its resumption.
type tracedLine struct{ tid, text string }

// traceLog splits a strace- or ltrace-format log (either tool's, or
// utap's) into lines, each call whole: the head of a call left
// <unfinished ...> is put back before its <... NAME resumed> rest.
func traceLog(text string) []tracedLine {
	open := map[string]string{} // tid → its unfinished head
	var out []tracedLine
	for _, l := range strings.Split(text, "\n") {
		if l == "" || strings.HasPrefix(l, "utap:") {
			continue
		}
		tid := ""
		if m := traceLead.FindString(l); m != "" {
			tid, l = strings.Trim(m, "[pid] "), l[len(m):]
		}
		if traceUnfin.MatchString(l) {
			open[tid] = traceUnfin.ReplaceAllString(l, "")
			continue
		}
		if m := traceResumed.FindStringSubmatch(l); m != nil {
			if _, ok := open[tid]; !ok {
				// Unfinished while the process had one thread, so
				// without a prefix (strace's way too).
				tid = ""
			}
			l = open[tid] + l[len(m[0]):]
			delete(open, tid)
		}
		out = append(out, tracedLine{tid, l})
	}
	return out
}

// straceLines turns a strace-format log into comparable lines: pid
// prefixes gone (pids become P1, P2, ... in order of appearance),
// addresses masked, unfinished/resumed pairs joined, strace's column
// padding collapsed.
func straceLines(text string) []string {
	pids := map[string]string{}
	pidRE := regexp.MustCompile(`\b\d{2,7}\b`)
	var out []string
	for _, tl := range traceLog(text) {
		if tl.tid != "" && pids[tl.tid] == "" {
			pids[tl.tid] = fmt.Sprintf("P%d", len(pids)+1)
		}
		l := straceAddr.ReplaceAllString(tl.text, "0x?")
		l = straceAlign.ReplaceAllString(l, ") =$1")
		l = pidRE.ReplaceAllStringFunc(l, func(n string) string {
			if p, ok := pids[n]; ok {
				return p
			}
			return n
		})
		out = append(out, l)
	}
	return out
}

// runTracer runs a tracer's command line argv in dir, its OUT argument
// replaced by a file in outDir (outside dir: ls -la lists dir, and must
// see the same files each time), and returns what it wrote there.
func runTracer(t *testing.T, dir, outDir string, argv []string) string {
	t.Helper()
	out := filepath.Join(outDir, "out.txt")
	os.Remove(out)
	argv = slices.Clone(argv)
	argv[slices.Index(argv, "OUT")] = out
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Logf("%v: %v\n%s", argv, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// syscallOf names a normalised line's call ("--- SIG" and "+++" lines
// as signal and exit).
func syscallOf(l string) string {
	switch {
	case strings.HasPrefix(l, "---"):
		return "(signal)"
	case strings.HasPrefix(l, "+++"):
		return "(exit)"
	}
	if i := strings.IndexByte(l, '('); i > 0 {
		return l[:i]
	}
	return "(other)"
}

type tally struct{ lines, same map[string]int }

// fidelityTracers are the tracers the corpus compares with strace: the
// ptrace engine with system calls in-process (its default), on pads and
// traps with no filter (--no-seccomp, attach mode's way) and on the stop
// path (--no-pads), and the uprobe engine.
var fidelityTracers = []struct {
	name string
	args []string
}{
	{"ptrace", []string{"--backend", "ptrace"}},
	{"ptrace --no-seccomp", []string{"--backend", "ptrace", "--no-seccomp"}},
	{"ptrace --no-pads", []string{"--backend", "ptrace", "--no-pads"}},
	{"uprobe", []string{"--backend", "uprobe"}},
}

func TestStraceFidelity(t *testing.T) {
	need.Uprobes(t) // both engines
	need.Tool(t, "strace")
	need.Tool(t, "git")
	dir, outDir := t.TempDir(), t.TempDir()
	corpus := straceCorpus(t, dir)
	run := func(argv ...string) string { return runTracer(t, dir, outDir, argv) }
	results := map[string]*tally{}
	for _, b := range fidelityTracers {
		results[b.name] = &tally{map[string]int{}, map[string]int{}}
	}
	var ran []string
	for _, c := range corpus {
		a := straceLines(run(append([]string{"strace", "-f", "-o", "OUT", "--"}, c.argv...)...))
		bset := multiset(straceLines(run(append([]string{"strace", "-f", "-o", "OUT", "--"}, c.argv...)...)))
		var stable []string
		for _, l := range a {
			if bset[l] > 0 {
				bset[l]--
				stable = append(stable, l)
			}
		}
		for _, b := range fidelityTracers {
			argv := append(append([]string{utapBin, "run"}, b.args...), "-q", "-f", "-S", "-o", "OUT", "--")
			u := multiset(straceLines(run(append(argv, c.argv...)...)))
			r := results[b.name]
			for _, l := range stable {
				name := syscallOf(l)
				r.lines[name]++
				if u[l] > 0 {
					u[l]--
					r.same[name]++
				} else if testing.Verbose() {
					t.Logf("%s/%s: not in utap's: %s", b.name, c.name, l)
				}
			}
		}
		ran = append(ran, c.name)
	}
	table := fidelityTable(results, ran)
	if path := os.Getenv("UTAP_FIDELITY_TABLE"); path != "" {
		os.WriteFile(path, []byte(table), 0o644)
	}
	t.Log("\n" + table)
	for _, b := range fidelityTracers {
		r := results[b.name]
		total, same := sum(r.lines), sum(r.same)
		if total == 0 {
			continue
		}
		if pct := 100 * float64(same) / float64(total); pct < 95 {
			t.Errorf("%s: %.1f%% of strace's lines identical (%d of %d), want at least 95%%", b.name, pct, same, total)
		}
	}
}

func multiset(lines []string) map[string]int {
	m := map[string]int{}
	for _, l := range lines {
		m[l]++
	}
	return m
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func fidelityTable(results map[string]*tally, ran []string) string {
	var b strings.Builder
	names := map[string]bool{}
	for _, r := range results {
		for n := range r.lines {
			names[n] = true
		}
	}
	var list []string
	for n := range names {
		list = append(list, n)
	}
	sort.Strings(list)
	fmt.Fprintf(&b, "Corpus: %s.\n\n", strings.Join(ran, ", "))
	b.WriteString("| system call | strace lines |")
	for _, tr := range fidelityTracers {
		fmt.Fprintf(&b, " %s identical |", tr.name)
	}
	b.WriteString("\n|---|---:|" + strings.Repeat("---:|", len(fidelityTracers)) + "\n")
	row := func(name string, lines int, same []int) {
		fmt.Fprintf(&b, "| %s | %d |", name, lines)
		for _, s := range same {
			if lines == 0 || s < 0 {
				b.WriteString(" – |")
				continue
			}
			fmt.Fprintf(&b, " %d (%.1f%%) |", s, 100*float64(s)/float64(lines))
		}
		b.WriteString("\n")
	}
	var engines []string
	for _, b := range fidelityTracers {
		engines = append(engines, b.name)
	}
	for _, n := range list {
		lines := 0
		var same []int
		for _, e := range engines {
			r := results[e]
			if sum(r.lines) == 0 {
				same = append(same, -1)
				continue
			}
			lines = r.lines[n]
			same = append(same, r.same[n])
		}
		row(n, lines, same)
	}
	var tot []int
	lines := 0
	for _, e := range engines {
		r := results[e]
		if sum(r.lines) == 0 {
			tot = append(tot, -1)
			continue
		}
		lines = sum(r.lines)
		tot = append(tot, sum(r.same))
	}
	row("**all**", lines, tot)
	return b.String()
}
