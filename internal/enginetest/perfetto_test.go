//go:build linux && amd64

package enginetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestCLIPerfetto: --format perfetto writes a Chrome trace-event document
// that ui.perfetto.dev opens: per thread, B and E nest as calls do and
// timestamps never go back; processes and threads are named; on both
// engines, for a program whose threads call a probed function.
func TestCLIPerfetto(t *testing.T) {
	bin := etWork(t)
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			out := filepath.Join(t.TempDir(), "trace.json")
			r := utap(t, "run", "--backend", b.name, "-q", "--format", "perfetto", "-o", out, "-e", "work", "--", bin, "threads", "200", "3")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				TraceEvents []struct {
					Name, Ph string
					Ts       float64
					Pid, Tid int
					Args     map[string]any
				}
			}
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatalf("not JSON: %v\n%.300s", err, data)
			}
			stacks, last := map[int][]string{}, map[int]float64{}
			slices, names := 0, map[string]int{}
			for _, e := range doc.TraceEvents {
				switch e.Ph {
				case "M":
					names[e.Name]++
					continue
				case "B":
					stacks[e.Tid] = append(stacks[e.Tid], e.Name)
				case "E":
					s := stacks[e.Tid]
					if len(s) == 0 || s[len(s)-1] != e.Name {
						t.Fatalf("tid %d: E %s does not close %v", e.Tid, e.Name, s)
					}
					stacks[e.Tid] = s[:len(s)-1]
					slices++
				}
				if e.Ts < last[e.Tid] {
					t.Fatalf("tid %d: timestamp %v after %v", e.Tid, e.Ts, last[e.Tid])
				}
				last[e.Tid] = e.Ts
			}
			for tid, s := range stacks {
				if len(s) > 0 {
					t.Errorf("tid %d: slices left open: %v", tid, s)
				}
			}
			if slices != 600 || names["process_name"] == 0 || names["thread_name"] < 3 {
				t.Errorf("%d slices (want 600), names %v", slices, names)
			}
		})
	}
}
