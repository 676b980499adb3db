//go:build linux && amd64

package enginetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestCLIScript: `utap run -- ./script.sh` probes the interpreter its #!
// line names (here through env), as the kernel runs it: same counts on
// both engines, the script's output untouched.
func TestCLIScript(t *testing.T) {
	script := filepath.Join(t.TempDir(), "s.sh")
	if err := os.WriteFile(script, []byte("#!/usr/bin/env sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	counts := map[string]uint64{}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			r := utap(t, "run", "--backend", b.name, "-q", "--count-only", "--format", "json", "-e", "libc:malloc", "--", script)
			if r.code != 0 || r.stdout != "hi\n" {
				t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
			}
			var rep struct{ Functions []struct{ Calls uint64 } }
			if err := json.Unmarshal([]byte(r.stderr), &rep); err != nil || len(rep.Functions) != 1 || rep.Functions[0].Calls == 0 {
				t.Fatalf("summary %q: %+v, %v", r.stderr, rep, err)
			}
			counts[b.name] = rep.Functions[0].Calls
		})
	}
	if p, u := counts["ptrace"], counts["uprobe"]; p != 0 && u != 0 && p != u {
		t.Errorf("malloc calls: ptrace %d, uprobe %d", p, u)
	}
}
