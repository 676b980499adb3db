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

// TestUsage: --version answers, `utap help run` helps, and a flag the
// command line gets wrong is one line naming it, exit 2, not the whole help.
func TestUsage(t *testing.T) {
	if r := utap(t, "--version"); r.code != 0 || !strings.HasPrefix(r.stdout, "utap version ") {
		t.Errorf("--version: %+v", r)
	}
	if r := utap(t, "help", "run"); r.code != 0 || !strings.Contains(r.stdout, "utap run") {
		t.Errorf("help run: %+v", r)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--bogus", "--", "true"}, "utap: run: unknown flag -bogus (see 'utap run --help')"},
		{[]string{"--bogus"}, "utap: unknown flag -bogus (see 'utap --help')"},
		{[]string{"attach", "-p", "1", "-e", "x", "--duration", "5"}, "a duration with its unit: 10s, 500ms, 2m"},
	} {
		r := utap(t, tc.args...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 2 || len(lines) != 1 || !strings.Contains(lines[0], tc.want) || r.stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want one line with %q", tc.args, r.code, r.stdout, r.stderr, tc.want)
		}
	}
}
