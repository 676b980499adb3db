//go:build linux && amd64

package uprobe

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/cilium/ebpf/features"
	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// Per-event overhead is the slope of whole-run time over two call counts
// of the fixture's work(), so start-up and attach costs cancel out.
const slopeN1, slopeN2 = 20000, 100000

func slope(b *testing.B, runN func(n int)) {
	var t1, t2 time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		runN(slopeN1)
		t1 += time.Since(start)
		start = time.Now()
		runN(slopeN2)
		t2 += time.Since(start)
	}
	per := float64(t2-t1) / float64(b.N) / float64(slopeN2-slopeN1)
	b.ReportMetric(per, "ns/event")
	b.ReportMetric(0, "ns/op")
}

func BenchmarkUntraced(b *testing.B) {
	bin := fixture.C(b, "et_work.c")
	slope(b, func(n int) {
		if err := exec.Command(bin, "count", strconv.Itoa(n)).Run(); err != nil {
			b.Fatal(err)
		}
	})
}

func benchEngine(b *testing.B, spec *probe.Spec, emit func(*probe.Event)) {
	need.Uprobes(b)
	bin := fixture.C(b, "et_work.c")
	site := funcSite(b, bin, "work", 0, spec)
	slope(b, func(n int) {
		var count int
		res, err := (&Engine{}).Trace(context.Background(), probe.Target{Argv: []string{bin, "count", strconv.Itoa(n)}, Stdout: io.Discard},
			[]probe.Site{site}, func(ev *probe.Event) { count++; emit(ev) })
		if err != nil || res.Lost != 0 || count != n {
			b.Fatalf("%d events of %d, %d lost, %v", count, n, res.Lost, err)
		}
	})
}

// BenchmarkEntryDelivered delivers every event to user space and drops it.
func BenchmarkEntryDelivered(b *testing.B) {
	benchEngine(b, &probe.Spec{Text: "work", Symbol: "work"}, func(*probe.Event) {})
}

// BenchmarkEntryCounted counts in the kernel (utap --count-only), as
// BenchmarkBpftraceCount's @c = count() does.
func BenchmarkEntryCounted(b *testing.B) {
	need.Uprobes(b)
	bin := fixture.C(b, "et_work.c")
	site := funcSite(b, bin, "work", 0, &probe.Spec{Text: "work", Symbol: "work"})
	slope(b, func(n int) {
		res, err := (&Engine{}).Trace(context.Background(),
			probe.Target{Argv: []string{bin, "count", strconv.Itoa(n)}, Stdout: io.Discard, Tally: true},
			[]probe.Site{site}, func(*probe.Event) { b.Fatal("an event while counting in place") })
		if err != nil || len(res.Tallies) != 1 || res.Tallies[0].Hits != uint64(n) {
			b.Fatalf("tallies %+v of %d calls: %v", res.Tallies, n, err)
		}
	})
}

// BenchmarkEntryAggCount and BenchmarkEntryAggHist aggregate in the
// kernel (Target.Aggregate, agg.go), beside BenchmarkEntryCounted
// (--count-only) on the same workload: #24's target is at most 1.1× its
// cost per call.
func BenchmarkEntryAggCount(b *testing.B) { benchAggregate(b, "work => count()") }
func BenchmarkEntryAggHist(b *testing.B)  { benchAggregate(b, "work => hist(arg2) by pid") }

func benchAggregate(b *testing.B, text string) {
	need.Uprobes(b)
	bin := fixture.C(b, "et_work.c")
	spec, err := probe.Parse(text)
	if err != nil {
		b.Fatal(err)
	}
	site := funcSite(b, bin, "work", 0, spec)
	slope(b, func(n int) {
		var hits, others uint64
		_, err := (&Engine{}).Trace(context.Background(),
			probe.Target{Argv: []string{bin, "count", strconv.Itoa(n)}, Stdout: io.Discard, Aggregate: true},
			[]probe.Site{site}, func(ev *probe.Event) {
				if ev.Agg == nil {
					others++
					return
				}
				hits += ev.Agg.State.Count
			})
		if err != nil || hits != uint64(n) || others != 0 {
			b.Fatalf("%d hits aggregated of %d calls, %d other events: %v", hits, n, others, err)
		}
	})
}

func BenchmarkEntryTwoArgs(b *testing.B) {
	spec := &probe.Spec{Text: "work(arg1,arg2)", Symbol: "work", Fetches: fetches(arg(1), arg(2))}
	benchEngine(b, spec, func(ev *probe.Event) {
		fmt.Fprintf(io.Discard, "%d %d %s(%d, %d)\n", ev.TimeNs, ev.TID, ev.Func, ev.Args[0].Int, ev.Args[1].Int)
	})
}

func BenchmarkBpftraceCount(b *testing.B) {
	need.Uprobes(b)
	need.Tool(b, "bpftrace")
	bin := fixture.C(b, "et_work.c")
	slope(b, func(n int) {
		cmd := exec.Command("bpftrace", "-e", "uprobe:"+bin+":work { @c = count(); }", "-c", bin+" count "+strconv.Itoa(n))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil || !bytes.Contains(out.Bytes(), []byte("@c: "+strconv.Itoa(n))) {
			b.Fatalf("bpftrace: %v\n%s", err, out.String())
		}
	})
}

// libcSites resolves up to n distinct libc functions the engine accepts.
func libcSites(b *testing.B, n int) []probe.Site {
	const libc = "/lib/x86_64-linux-gnu/libc.so.6"
	f, err := elf.Open(libc)
	if err != nil {
		b.Skip(err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		b.Fatal(err)
	}
	sort.Slice(syms, func(i, j int) bool { return syms[i].Value < syms[j].Value })
	spec := &probe.Spec{Text: "libc:*", Object: "libc", Symbol: "*"}
	var sites []probe.Site
	seen := map[uint64]bool{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value == 0 || seen[s.Value] {
			continue
		}
		seen[s.Value] = true
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && p.Vaddr <= s.Value && s.Value < p.Vaddr+p.Filesz {
				site := probe.Site{Spec: spec, Object: libc, Func: s.Name, FuncAddr: s.Value, Addr: s.Value,
					FileOffset: s.Value - p.Vaddr + p.Off}
				if site.Insn, err = readCode(libc, site.FileOffset, 15); err == nil && refuse(site.Insn) == nil {
					sites = append(sites, site)
				}
			}
		}
		if len(sites) == n {
			break
		}
	}
	return sites
}

// benchAttach measures placing and removing n libc probes in one process.
func benchAttach(b *testing.B, n int, noMulti bool) {
	need.Uprobes(b)
	sites := libcSites(b, n)
	sleeper := exec.Command("sleep", "600")
	if err := sleeper.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	var attach, detach time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		plans, err := planAll(sites, false)
		if err != nil {
			b.Fatal(err)
		}
		multi := !noMulti && features.HaveBPFLinkUprobeMulti() == nil
		spec, err := newSpec(sites, plans, specConfig{ringSize: 1 << 20, multi: multi, v4: haveV4(), rd: kernelReads()})
		if err != nil {
			b.Fatal(err)
		}
		s, err := load(spec, sites, false)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.attach([]int{sleeper.Process.Pid}); err != nil {
			s.close()
			b.Fatal(err)
		}
		attach += time.Since(start)
		start = time.Now()
		if _, err := s.close(); err != nil {
			b.Fatal(err)
		}
		detach += time.Since(start)
	}
	b.ReportMetric(float64(len(sites)), "probes")
	b.ReportMetric(attach.Seconds()/float64(b.N), "s-attach")
	b.ReportMetric(detach.Seconds()/float64(b.N), "s-detach")
	b.ReportMetric(0, "ns/op")
}

func BenchmarkAttach1000Multi(b *testing.B) { benchAttach(b, 1000, false) }
func BenchmarkAttach1000Perf(b *testing.B)  { benchAttach(b, 1000, true) }

// benchSites is benchEngine for any sites, counting want events per call.
func benchSites(b *testing.B, e func() *Engine, sites func(bin string) []probe.Site, perCall int) {
	need.Uprobes(b)
	bin := fixture.C(b, "et_work.c")
	ss := sites(bin)
	slope(b, func(n int) {
		var count int
		res, err := e().Trace(context.Background(), probe.Target{Argv: []string{bin, "count", strconv.Itoa(n)}, Stdout: io.Discard},
			ss, func(ev *probe.Event) { count++ })
		if err != nil || res.Lost != 0 || count != perCall*n {
			b.Fatalf("%d events of %d, %d lost, %v", count, perCall*n, res.Lost, err)
		}
	})
}

func specSites(b *testing.B, bin string, kind probe.Kind, text string, fs ...probe.Expr) []probe.Site {
	return []probe.Site{funcSite(b, bin, "work", 0, &probe.Spec{Text: text, Symbol: "work", Kind: kind, Fetches: fetches(fs...)})}
}

// BenchmarkReturn: a return probe with its duration (entry stamp + uretprobe).
func BenchmarkReturn(b *testing.B) {
	benchSites(b, func() *Engine { return &Engine{} }, func(bin string) []probe.Site {
		return specSites(b, bin, probe.Return, "return:work(ret)", probe.BuiltinRet)
	}, 1)
}

// BenchmarkReturnRetProbes: the same with a uprobe on work's RET.
func BenchmarkReturnRetProbes(b *testing.B) {
	benchSites(b, func() *Engine { return &Engine{RetProbes: true} }, func(bin string) []probe.Site {
		return specSites(b, bin, probe.Return, "return:work(ret)", probe.BuiltinRet)
	}, 1)
}

// BenchmarkEntryTwoArgsNoSleep: BenchmarkEntryTwoArgs without sleepable
// programs (bpf_probe_read_user only).
func BenchmarkEntryTwoArgsNoSleep(b *testing.B) {
	saved := kernelReads
	kernelReads = func() reads { return reads{} }
	defer func() { kernelReads = saved }()
	BenchmarkEntryTwoArgs(b)
}

// BenchmarkEntryDerefNoSleep and BenchmarkEntryDeref: a fetch that reads
// memory, with and without sleepable reads.
func BenchmarkEntryDeref(b *testing.B) {
	benchSites(b, func() *Engine { return &Engine{} }, func(bin string) []probe.Site {
		return specSites(b, bin, probe.Entry, "work(arg7)", arg(7))
	}, 1)
}

func BenchmarkEntryDerefNoSleep(b *testing.B) {
	saved := kernelReads
	kernelReads = func() reads { return reads{} }
	defer func() { kernelReads = saved }()
	BenchmarkEntryDeref(b)
}

// BenchmarkFalseCondition: the condition filters every hit in the kernel.
func BenchmarkFalseCondition(b *testing.B) {
	cond := &probe.Binary{Op: probe.OpEq, T: probe.S64, X: arg(1), Y: &probe.Const{Val: 1 << 40}}
	benchSites(b, func() *Engine { return &Engine{} }, func(bin string) []probe.Site {
		s := specSites(b, bin, probe.Entry, "work if arg1 == 1<<40")
		s[0].Cond = cond
		return s
	}, 0)
}

func bpftraceSlope(b *testing.B, prog func(bin string) string) {
	need.Uprobes(b)
	need.Tool(b, "bpftrace")
	bin := fixture.C(b, "et_work.c")
	slope(b, func(n int) {
		cmd := exec.Command("bpftrace", "-e", prog(bin), "-c", bin+" count "+strconv.Itoa(n))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			b.Fatalf("bpftrace: %v\n%s", err, out.String())
		}
	})
}

func BenchmarkBpftraceReturn(b *testing.B) {
	bpftraceSlope(b, func(bin string) string {
		return "uprobe:" + bin + ":work { @s[tid] = nsecs } uretprobe:" + bin + ":work { @d = hist(nsecs - @s[tid]); }"
	})
}

func BenchmarkBpftraceTwoArgs(b *testing.B) {
	bpftraceSlope(b, func(bin string) string {
		return "uprobe:" + bin + ":work { printf(\"%d %d work(%d, %d)\\n\", nsecs, tid, arg0, arg1); }"
	})
}

func BenchmarkBpftraceFalseCondition(b *testing.B) {
	bpftraceSlope(b, func(bin string) string {
		return "uprobe:" + bin + ":work /arg0 == 1099511627776/ { @c = count(); }"
	})
}
