//go:build linux && amd64

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// utapBin is the utap binary built once for the tests: they run it as a
// user would.
var utapBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "utap-cli")
	if err != nil {
		panic(err)
	}
	utapBin = filepath.Join(dir, "utap")
	if out, err := exec.Command("go", "build", "-o", utapBin, ".").CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

func utap(t *testing.T, args ...string) result {
	t.Helper()
	cmd := exec.Command(utapBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout.String(), stderr.String(), 0}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// oneErrorLine checks the bad-input contract: exit 2, one line on stderr
// that starts with "utap: " and contains every want.
func oneErrorLine(t *testing.T, r result, want ...string) {
	t.Helper()
	if r.code != 2 {
		t.Errorf("exit %d, want 2 (stderr %q)", r.code, r.stderr)
	}
	line := strings.TrimSuffix(r.stderr, "\n")
	if strings.Contains(line, "\n") || !strings.HasPrefix(line, "utap: ") {
		t.Errorf("want one error line, got %q", r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(line, w) {
			t.Errorf("error %q does not mention %q", line, w)
		}
	}
}
