//go:build linux && amd64

package uprobe

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
	"github.com/utap/utap/probe"
)

// TestReturnArmedEntries: a function probed at entry and return, called
// without a pause while the trace attaches and detaches. Every entry
// shown without its return is among the "returns not seen": an entry
// probe reports only while return probes are armed, as the stamp does,
// so none comes before they are armed or after they are disarmed (#25).
// The trace ends once events flow, whatever the machine's speed. The one
// call per thread that straddles a flip of the flag may be seen by one of
// the two programs and not the other: one per flip.
func TestReturnArmedEntries(t *testing.T) {
	need.Uprobes(t)
	bin := fixture.C(t, "et_work.c")
	cmd := startReady(t, bin, "spin")
	sites := resolve(t, bin, "work", "return:work")
	for range 3 {
		ctx, cancel := context.WithCancel(context.Background())
		var mu sync.Mutex
		entries, returns := 0, 0
		res, err := (&Engine{}).Trace(ctx, probe.Target{PIDs: []int{cmd.Process.Pid}}, sites, func(ev *probe.Event) {
			mu.Lock()
			defer mu.Unlock()
			if ev.Kind == "return" {
				returns++
			} else {
				entries++
			}
			if returns == 1000 {
				cancel()
			}
		})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		unseen := 0
		for _, l := range res.Notices {
			if strings.Contains(l, "returns not seen") {
				fmt.Sscan(l, &unseen)
			}
		}
		if d := entries - returns - unseen; d < -1 || d > 1 {
			t.Errorf("%d entries, %d returns, %d returns not seen: %d entries unaccounted for (notices %q)", entries, returns, unseen, d, res.Notices)
		}
		t.Logf("%d entries, %d returns, %d not seen", entries, returns, unseen)
	}
}
