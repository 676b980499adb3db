//go:build linux && amd64

package ptrace

import (
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

func TestLifecycle(t *testing.T) {
	need.Root(t)
	bin := fixture.C(t, "pt_fork.c")
	for _, c := range []struct {
		mode   string
		follow bool
		want   string // arg2 values seen, by count
	}{
		{"fork", false, "1x6"},
		{"fork", true, "1x6 2x7"},
		{"vfork", false, "1x6"},
		{"vfork", true, "100x5 1x6"},
		{"exec", false, "100x5 1x3"},
		{"clone", false, "1x6 3x4"},
		{"clone", true, "1x6 3x4"},
	} {
		t.Run(fmt.Sprintf("%s/follow=%v", c.mode, c.follow), func(t *testing.T) {
			want, err := exec.Command(bin, c.mode).Output()
			if err != nil {
				t.Fatal(err)
			}
			sites := []probe.Site{siteAt(t, bin, "work", 0, argFetch(2))}
			evs, out, res := run(t, c.follow, sites, bin, c.mode)
			if out != string(want) || res.ExitCode != 0 {
				t.Fatalf("exit %d, output %q, want %q", res.ExitCode, out, want)
			}
			n := map[uint64]int{}
			for _, e := range evs {
				n[e.Args[0].Int]++
			}
			var got []string
			for v, k := range n {
				got = append(got, fmt.Sprintf("%dx%d", v, k))
			}
			sort.Strings(got)
			if s := strings.Join(got, " "); s != c.want {
				t.Fatalf("events %s, want %s", s, c.want)
			}
		})
	}
}
