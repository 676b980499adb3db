//go:build linux && amd64

package uprobe

import (
	"sort"
	"strings"
	"testing"

	"github.com/utap/utap/probe"
)

// TestSpecWithoutKernel generates the BPF side of a trace — three entry
// sites of one glob spec and a return probe — with no kernel object: maps
// are named, programs refer to them by name, one program serves the glob.
func TestSpecWithoutKernel(t *testing.T) {
	entry := &probe.Spec{Text: "*(arg2)", Symbol: "*", Fetches: fetches(arg(2))}
	ret := &probe.Spec{Text: "return:work(ret)", Kind: probe.Return, Symbol: "work"}
	var sites []probe.Site
	var plans []plan
	for i, fn := range []string{"work", "greet", "peek"} {
		sites = append(sites, probe.Site{Spec: entry, Fetches: entry.Fetches, Func: fn, Object: "/bin/x", FileOffset: uint64(0x100 * (i + 1))})
		plans = append(plans, plan{spots: []spot{{off: uint64(0x100 * (i + 1))}}})
	}
	sites = append(sites, probe.Site{Spec: ret, Func: "work", Object: "/bin/x", FileOffset: 0x100})
	plans = append(plans, plan{spots: []spot{{off: 0x100, stamp: true}, {off: 0x100, uret: true}}, key: callKey{spAdjust: -8}})

	spec, err := newSpec(sites, plans, specConfig{ringSize: 1 << 16, v4: true})
	if err != nil {
		t.Fatal(err)
	}
	var maps []string
	for name := range spec.Maps {
		maps = append(maps, name)
	}
	sort.Strings(maps)
	if got := strings.Join(maps, " "); got != "utap_armed utap_events utap_stats utap_times" {
		t.Errorf("maps %s", got)
	}
	if len(spec.progs) != 3 { // the glob's, the return probe's, the entry stamp
		t.Errorf("%d programs, want 3", len(spec.progs))
	}
	if len(spec.placed) != 5 || spec.placed[0].prog != spec.placed[1].prog || spec.placed[1].prog != spec.placed[2].prog {
		t.Errorf("placements %+v", spec.placed)
	}
	for name, ps := range spec.Programs {
		for _, ins := range ps.Instructions {
			if ins.IsLoadFromMap() && spec.Maps[ins.Reference()] == nil {
				t.Errorf("%s refers to map %q, which the spec does not have", name, ins.Reference())
			}
		}
	}
}
