//go:build linux && amd64

package enginetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
)

// The ltrace corpus: real commands traced by `ltrace -f -C` (every call
// the program makes through its PLT) and by `utap run -f -E '*'` (the
// same calls, ltrace's default filter), compared line by line after
// normalising what differs by nature (pids, addresses, column padding,
// ltrace's nil for NULL, the parameter types ltrace -C prints in a
// demangled name). The table it writes (UTAP_LTRACE_TABLE) is
// docs/ltrace.md's.

var (
	ltraceAlign   = regexp.MustCompile(`\s+= `)
	ltraceCloseSp = regexp.MustCompile(`\s+\)`)
	// ltrace spells a NULL string nil and a NULL address 0; utap NULL.
	ltraceNil = regexp.MustCompile(`\b(nil|NULL)\b`)
)

// ltraceLines normalises one ltrace-format log.
func ltraceLines(text string) []string {
	var out []string
	for _, tl := range traceLog(text) {
		l := tl.text
		if strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---") {
			continue // ltrace's exit and signal lines: not calls
		}
		l = demangledParams(l)
		l = straceAddr.ReplaceAllString(l, "0x?")
		l = ltraceAlign.ReplaceAllString(l, " = ")
		l = ltraceCloseSp.ReplaceAllString(l, ")")
		l = ltraceNil.ReplaceAllString(l, "0")
		out = append(out, l)
	}
	return out
}

// demangledParams drops the parameter types ltrace -C prints in a C++
// name (operator new(unsigned long)(32) is operator new(32)).
func demangledParams(l string) string {
	i := strings.Index(l, ")(")
	if i < 0 {
		return l
	}
	depth := 0
	for j := i; j >= 0; j-- {
		switch l[j] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return l[:j] + l[i+1:]
			}
		}
	}
	return l
}

func funcOf(l string) string {
	if i := strings.IndexByte(l, '('); i > 0 {
		return l[:i]
	}
	return l
}

func TestLtraceCorpus(t *testing.T) {
	need.Uprobes(t)
	need.Tool(t, "ltrace")
	need.Tool(t, "git")
	dir, outDir := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("pear\napple\nfig\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte(strings.Repeat("utap ltrace corpus\n", 100)), 0o644)
	repo := filepath.Join(dir, "repo")
	os.Mkdir(repo, 0o755)
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.email", "u@t"}, {"config", "user.name", "u"},
		{"commit", "-q", "--allow-empty", "-m", "one"}, {"commit", "-q", "--allow-empty", "-m", "two"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	corpus := []corpusCmd{
		{"sort", []string{"sort", filepath.Join(dir, "a.txt")}},
		{"git log", []string{"git", "-C", repo, "log", "--oneline"}},
		{"gzip", []string{"gzip", "-c", "-n", filepath.Join(dir, "b.txt")}},
		{"python3", []string{"/usr/bin/python3.11", "-S", "-c", "pass"}},
		{"C++ (libstdc++)", []string{fixture.C(t, "cxx_calls.cc", "-O1", "-g")}},
		// Added 2026-11-25, commands not used before.
		{"wc", []string{"wc", "-l", filepath.Join(dir, "a.txt")}},
		{"head", []string{"head", "-n", "5", filepath.Join(dir, "a.txt")}},
		{"cut", []string{"cut", "-c1-5", filepath.Join(dir, "a.txt")}},
		{"uniq", []string{"uniq", filepath.Join(dir, "a.txt")}},
		{"tail", []string{"tail", "-n", "3", filepath.Join(dir, "a.txt")}},
	}
	run := func(argv ...string) []string { return ltraceLines(runTracer(t, dir, outDir, argv)) }
	rows := map[string]*ltraceRow{}
	get := func(fn string) *ltraceRow {
		if rows[fn] == nil {
			rows[fn] = &ltraceRow{}
		}
		return rows[fn]
	}
	var perCmd []string
	for _, c := range corpus {
		ltraceArgv := append([]string{"ltrace", "-f", "-C", "-o", "OUT", "--"}, c.argv...)
		l := run(ltraceArgv...)
		// Lines that change from one ltrace run to the next (heap and
		// stack addresses inside buffers, as ASLR places them) say
		// nothing about utap: counted only when ltrace's second run
		// printed them too, as the strace corpus does.
		again := multiset(run(ltraceArgv...))
		stable := l[:0:0]
		for _, x := range l {
			if again[x] > 0 {
				again[x]--
				stable = append(stable, x)
			}
		}
		l = stable
		u := run(append([]string{utapBin, "run", "--backend", "ptrace", "-q", "-f", "-E", "*", "-o", "OUT", "--"}, c.argv...)...)
		uset := multiset(u)
		same := 0
		for _, x := range l {
			r := get(funcOf(x))
			r.ltrace++
			if uset[x] > 0 {
				uset[x]--
				r.same++
				same++
			} else if testing.Verbose() {
				t.Logf("%s: not in utap's: %s", c.name, x)
			}
		}
		for _, x := range u {
			get(funcOf(x)).utap++
		}
		perCmd = append(perCmd, fmt.Sprintf("| %s | %d | %d | %d (%.1f%%) |", c.name, len(l), len(u), same, pct(same, len(l))))
	}
	table := ltraceTable(rows, perCmd)
	if path := os.Getenv("UTAP_LTRACE_TABLE"); path != "" {
		os.WriteFile(path, []byte(table), 0o644)
	}
	t.Log("\n" + table)
	total, same := 0, 0
	for _, r := range rows {
		total, same = total+r.ltrace, same+r.same
	}
	// A floor, not the goal: what ltrace decodes from its own struct and
	// sized-string lenses (sigaction, sigsets, memcpy's buffer) utap shows
	// as pointers.
	if p := pct(same, total); p < 60 {
		t.Errorf("%.1f%% of ltrace's lines identical (%d of %d)", p, same, total)
	}
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// ltraceRow counts one function's lines: ltrace's, those utap printed
// identically, and utap's.
type ltraceRow struct{ ltrace, same, utap int }

// ltraceTable is the Markdown of docs/ltrace.md: per command, then per
// function (the 40 with most lines, then the rest summed).
func ltraceTable(rows map[string]*ltraceRow, perCmd []string) string {
	var b strings.Builder
	b.WriteString("| command | ltrace lines | utap lines | identical |\n|---|--:|--:|--:|\n")
	for _, l := range perCmd {
		b.WriteString(l + "\n")
	}
	var names []string
	for n := range rows {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, c := rows[names[i]], rows[names[j]]
		if a.ltrace != c.ltrace {
			return a.ltrace > c.ltrace
		}
		return names[i] < names[j]
	})
	b.WriteString("\n| function | ltrace lines | utap lines | identical |\n|---|--:|--:|--:|\n")
	var rest, all ltraceRow
	for i, n := range names {
		r := rows[n]
		all.ltrace, all.same, all.utap = all.ltrace+r.ltrace, all.same+r.same, all.utap+r.utap
		if i >= 40 {
			rest.ltrace, rest.same, rest.utap = rest.ltrace+r.ltrace, rest.same+r.same, rest.utap+r.utap
			continue
		}
		fmt.Fprintf(&b, "| `%s` | %d | %d | %d (%.0f%%) |\n", n, r.ltrace, r.utap, r.same, pct(r.same, r.ltrace))
	}
	if len(names) > 40 {
		fmt.Fprintf(&b, "| %d others | %d | %d | %d (%.0f%%) |\n", len(names)-40, rest.ltrace, rest.utap, rest.same, pct(rest.same, rest.ltrace))
	}
	fmt.Fprintf(&b, "| **all** | %d | %d | %d (%.1f%%) |\n", all.ltrace, all.utap, all.same, pct(all.same, all.ltrace))
	return b.String()
}
