package enginetest

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/utap/utap/internal/agg"
)

// uprobeBackend is the kernel engine's entry in backends.
func uprobeBackend(t *testing.T) string {
	needBackend(t, "uprobe")
	return "uprobe"
}

// TestCLIAggregateKernel: on the kernel engine the aggregations are
// computed in BPF maps (-v says how many specs), and what the CLI prints
// for 100,000 calls work(1, i) is exactly what adding each call's value
// gives: every function, expression, pid and comm keys, and two
// conditions on one function as two maps.
func TestCLIAggregateKernel(t *testing.T) {
	backend := uprobeBackend(t)
	bin := etWork(t)
	const n = 100000
	specs := []string{
		"work => @c = count()",
		"work => @s = sum(arg2)",
		"work => @mn = min(arg2 - 50000)",
		"work => @mx = max(arg2)",
		"work => @a = avg(arg2)",
		"work => @st = stats(arg2)",
		"work => @h = hist(arg2 - 1000)",
		"work => @l = lhist(arg2 % 1000, 0, 100, 10)",
		"work => @k = sum(arg1) by arg2 % 7",
		"work if arg2 < 500 => count()",
		"work if arg2 >= 500 => count()",
		"work => @p = count() by pid",
		"work => @cm = max(arg2) by comm",
		"return:work => @r = hist(ret)",
	}
	out, stderr := aggRun(t, []string{"-v", "--backend", backend}, specs, bin, "count", strconv.Itoa(n))
	if want := "aggregated in the kernel: 14 specs\n"; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q, want the line %q", stderr, want)
	}
	m := regexp.MustCompile(`@p\[(\d+)\]`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no @p[PID] in\n%s", out)
	}
	pid, _ := strconv.ParseInt(m[1], 10, 64)
	comm := filepath.Base(bin)
	comm = comm[:min(len(comm), 15)]

	var set agg.Set
	add := func(name string, k agg.Kind, key []agg.Part, v func(i int64) int64, cond func(i int64) bool) {
		mp, err := set.Map(name, k)
		if err != nil {
			t.Fatal(err)
		}
		for i := range int64(n) {
			if cond == nil || cond(i) {
				set.Add(mp, key, v(i))
			}
		}
	}
	num := func(v int64) agg.Part { return agg.Part{Text: strconv.FormatInt(v, 10), Int: v, IsInt: true} }
	id := func(i int64) int64 { return i }
	add("@c", agg.Kind{Func: agg.Count}, nil, id, nil)
	add("@s", agg.Kind{Func: agg.Sum}, nil, id, nil)
	add("@mn", agg.Kind{Func: agg.Min}, nil, func(i int64) int64 { return i - 50000 }, nil)
	add("@mx", agg.Kind{Func: agg.Max}, nil, id, nil)
	add("@a", agg.Kind{Func: agg.Avg}, nil, id, nil)
	add("@st", agg.Kind{Func: agg.Stats}, nil, id, nil)
	add("@h", agg.Kind{Func: agg.Hist}, nil, func(i int64) int64 { return i - 1000 }, nil)
	add("@l", agg.Kind{Func: agg.LHist, Min: 0, Max: 100, Step: 10}, nil, func(i int64) int64 { return i % 1000 }, nil)
	mk, _ := set.Map("@k", agg.Kind{Func: agg.Sum})
	for i := range int64(n) {
		set.Add(mk, []agg.Part{num(i % 7)}, 1)
	}
	add(`@"work if arg2 < 500"`, agg.Kind{Func: agg.Count}, nil, id, func(i int64) bool { return i < 500 })
	add(`@"work if arg2 >= 500"`, agg.Kind{Func: agg.Count}, nil, id, func(i int64) bool { return i >= 500 })
	add("@p", agg.Kind{Func: agg.Count}, []agg.Part{num(pid)}, id, nil)
	add("@cm", agg.Kind{Func: agg.Max}, []agg.Part{{Text: comm}}, id, nil)
	add("@r", agg.Kind{Func: agg.Hist}, nil, func(i int64) int64 { return 1 + i }, nil)
	var want bytes.Buffer
	set.WriteText(&want)
	if out != want.String() {
		t.Errorf("got\n%s\nwant\n%s", out, want.String())
	}
}

// TestCLIAggregateKernelFallback: a spec the kernel engine cannot
// aggregate in a map (a key comparing strings) is aggregated from its
// events, and -v says why; the others still are in the kernel.
// --interval prints maps the kernel engine's deltas keep exact.
func TestCLIAggregateKernelFallback(t *testing.T) {
	backend := uprobeBackend(t)
	out, stderr := aggRun(t, []string{"-v", "--backend", backend}, []string{
		`work => @z = count() by str(arg1) == "x"`, "work => @c = count() by arg1",
	}, etWork(t), "count", "10")
	if out != "@z[?]: 10\n@c[1]: 10\n" {
		t.Errorf("got\n%s", out)
	}
	for _, line := range []string{"aggregated in the kernel: 1 specs", `work => @z = count() by str(arg1) == "x": aggregated from its events (a key that reads strings at work)`} {
		if !strings.Contains(stderr, "utap: "+line+"\n") {
			t.Errorf("stderr %q, want the line %q", stderr, line)
		}
	}
	out, _ = aggRun(t, []string{"-q", "--backend", backend, "--interval", "10ms"}, []string{"leaf => count()"}, stackChain(t), "3", "300")
	re := regexp.MustCompile(`^(\d\d:\d\d:\d\d\n@leaf: [03]\n)+@leaf: 3\n$`)
	if !re.MatchString(out) {
		t.Errorf("got\n%s\nwant time lines each followed by the map, then the map", out)
	}
}

// TestCLIAggregateKernelStrings: str() keys in BPF maps show as the
// ptrace engine's events show them: whole (300 bytes cut at 256), empty,
// faulted (?), from a page the process never touched, beside a number or
// the pid.
func TestCLIAggregateKernelStrings(t *testing.T) {
	backend := uprobeBackend(t)
	pt := backends[0] // the reference: ptrace
	pt.need(t)
	bin := etWork(t)
	specs := []string{
		"greet => @g = sum(arg2) by str(arg1)",
		"peek => @p = count() by str(arg1), arg2",
		"same => @s = count() by str(arg2)",
		"same => @t = count() by str(arg1), pid",
	}
	pids := regexp.MustCompile(`, \d+\]`)
	for _, mode := range []string{"args", "strs", "cold"} {
		out, stderr := aggRun(t, []string{"-v", "--backend", backend}, specs, bin, mode)
		if want := "aggregated in the kernel: 4 specs\n"; !strings.Contains(stderr, want) {
			t.Errorf("%s: stderr %q, want the line %q", mode, stderr, want)
		}
		ref, _ := aggRun(t, []string{"-q", "--backend", pt.name}, specs, bin, mode)
		if out, ref = pids.ReplaceAllString(out, ", PID]"), pids.ReplaceAllString(ref, ", PID]"); out != ref {
			t.Errorf("%s: got\n%s\nwant (%s)\n%s", mode, out, pt.name, ref)
		}
	}
}
