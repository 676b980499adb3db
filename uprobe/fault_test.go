//go:build linux && amd64

package uprobe

import (
	"fmt"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// TestReadUntouchedPages reads memory the tracee has never touched (no
// page table entry yet): bpf_probe_read_user fails there, so the engine
// must fault the pages in, as the tracee itself (and ptrace) would.
// Each way of reading the running kernel offers is checked.
func TestReadUntouchedPages(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.C(t, "up_fault.c", "-O2")
	s1 := &probe.StrOf{Addr: arg(1)}
	spec := &probe.Spec{Text: "show(str(arg1), *(u32*)arg2)", Symbol: "show",
		Fetches: fetches(s1, &probe.Deref{T: probe.U32, Addr: arg(2)}),
		Cond:    &probe.Binary{Op: probe.OpNe, T: probe.S64, X: s1, Y: &probe.StrLit{Val: "nothing"}}}
	want := `"far away string" 0, "away string" 1179403647` // 0x464c457f: \x7fELF
	full := kernelReads()
	if !full.sleepable {
		t.Skip("this kernel has no sleepable uprobe programs: reads cannot fault pages in")
	}
	saved := kernelReads
	defer func() { kernelReads = saved }()
	for _, rd := range []reads{full, {sleepable: true}} {
		kernelReads = func() reads { return rd }
		c, res := run(t, &Engine{}, probe.Target{Argv: []string{bin}}, []probe.Site{funcSite(t, bin, "show", 0, spec)})
		if got := eventArgs(c.evs); got != want || res.ExitCode != 0 {
			t.Errorf("reads %+v: got %s (exit %d), want %s", rd, got, res.ExitCode, want)
		}
	}
	kernelReads = func() reads { return reads{} }
	c, _ := run(t, &Engine{}, probe.Target{Argv: []string{bin}}, []probe.Site{funcSite(t, bin, "show", 0, spec)})
	t.Logf("with bpf_probe_read_user only: %s", eventArgs(c.evs))
}

// eventArgs formats events' args as "a b, a b".
func eventArgs(evs []probe.Event) string {
	var out []string
	for _, ev := range evs {
		var s []string
		for _, a := range ev.Args {
			switch {
			case a.Err:
				s = append(s, "?")
			case a.IsStr:
				s = append(s, fmt.Sprintf("%q", a.Str))
			default:
				s = append(s, fmt.Sprint(a.Int))
			}
		}
		out = append(out, strings.Join(s, " "))
	}
	return strings.Join(out, ", ")
}
