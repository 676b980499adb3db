//go:build linux && amd64

package uprobe

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// TestKernelMishandles attaches, past the refusal check, a uprobe to each
// instruction class refuse names, and checks the running kernel still
// mishandles it (a probe that never fires, or a changed result), next to
// controls of the same shape that it handles. If a kernel fixes a class,
// this test says so and the refusal can be narrowed.
func TestKernelMishandles(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.C(t, "up_insns.c", "-O1", "-g")
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	baseline := fields(string(out))
	for _, tc := range []struct {
		fn      string
		off     uint64
		refused bool
		result  string // key in the fixture's output
		calls   int
	}{
		{"lock_rip", 0, true, "lock_rip", 3},
		{"lock_mem", 0, true, "lock_mem", 3},
		{"vex_rip", 4, true, "vex_rip", 1},
		{"vmovq_gpr", 5, true, "vmovq_gpr", 1},
		{"vmovq_gpr", 0, false, "vmovq_gpr", 1},
		{"vmovd_gpr", 4, true, "vmovd_gpr", 1},
		{"vex_reg", 9, false, "vex_reg", 1},
		{"vex_reg", 13, true, "vex_reg", 1},
		{"shlx_fn", 0, false, "shlx", 1},
		{"andn_fn", 0, false, "andn", 1},
		{"syscall_rcx", 5, true, "sysrcx", 1},
		{"rep_movsb", 3, true, "repmovsb", 1},
	} {
		site := funcSite(t, bin, tc.fn, tc.off, &probe.Spec{Text: tc.fn, Symbol: tc.fn})
		if err := refuse(site.Insn); (err != nil) != tc.refused {
			t.Errorf("%s+%d: refuse = %v, want refused=%v", tc.fn, tc.off, err, tc.refused)
		}
		refuseInsn = func([]byte) error { return nil }
		var buf bytes.Buffer
		c := &collector{}
		_, err := (&Engine{}).Trace(context.Background(), probe.Target{Argv: []string{bin}, Stdout: &buf}, []probe.Site{site}, c.emit)
		refuseInsn = refuse
		got := fields(buf.String())[tc.result]
		ok := err == nil && c.n == tc.calls && got == baseline[tc.result]
		t.Logf("%s+%d (% x): attach error %v; %d hits of %d calls, result %s (unprobed %s)",
			tc.fn, tc.off, site.Insn[:5], err, c.n, tc.calls, got, baseline[tc.result])
		switch {
		case err == nil && !ok && !tc.refused:
			t.Errorf("%s: the kernel silently mishandles it but refuse lets it through", tc.fn)
		case err != nil && !strings.Contains(err.Error(), "--backend ptrace"):
			t.Errorf("%s: the kernel's refusal is not explained: %v", tc.fn, err)
		case ok && tc.refused:
			t.Logf("%s: refused although this kernel handles it", tc.fn)
		}
	}
}

func fields(line string) map[string]string {
	m := map[string]string{}
	f := strings.Fields(line)
	for i := 0; i+1 < len(f); i += 2 {
		m[f[i]] = f[i+1]
	}
	return m
}

// TestKernelRefusalNamed: when the kernel refuses one probe of a link of
// many, the error names that probe, its function and its instruction.
func TestKernelRefusalNamed(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.C(t, "up_insns.c", "-O1", "-g")
	var sites []probe.Site
	for _, fn := range []string{"shlx_fn", "evex_fn", "andn_fn"} {
		sites = append(sites, funcSite(t, bin, fn, 0, &probe.Spec{Text: fn, Symbol: fn}))
	}
	for _, noMulti := range []bool{false, true} {
		_, err := (&Engine{NoMulti: noMulti}).Trace(context.Background(), probe.Target{Argv: []string{bin}, Stdout: &bytes.Buffer{}}, sites, func(*probe.Event) {})
		if err == nil {
			t.Logf("noMulti=%v: this kernel probes EVEX vmovdqu64", noMulti)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "evex_fn") || !strings.Contains(msg, "62 f1 fe 48 6f 07") {
			t.Errorf("noMulti=%v: %v; want the probe and its instruction named", noMulti, err)
		}
	}
}
