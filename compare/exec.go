//go:build linux && amd64

package compare

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// runOnce runs argv to completion in dir and times it from fork to exit.
// The tool's standard output goes to dir/stdout, its errors to dir/stderr,
// and dir/events is the tool's event file, removed first.
func runOnce(ctx context.Context, dir string, argv []string, timeout time.Duration) (time.Duration, error) {
	events, stdout, stderr := filepath.Join(dir, "events"), filepath.Join(dir, "stdout"), filepath.Join(dir, "stderr")
	os.Remove(events)
	so, err := os.Create(stdout)
	if err != nil {
		return 0, err
	}
	defer so.Close()
	se, err := os.Create(stderr)
	if err != nil {
		return 0, err
	}
	defer se.Close()

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = so, se
	// A group of its own, so a timeout kills the tracer and its tracee.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second

	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("timed out after %v", timeout)
		}
		return 0, fmt.Errorf("%s: %w%s", filepath.Base(argv[0]), err, tail(stderr))
	}
	return wall, nil
}

// tail is the last lines of a tool's error output, for a failed row's reason.
func tail(file string) string {
	b, _ := os.ReadFile(file)
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return ""
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return ": " + strings.Join(lines, " / ")
}

// errChecksum says a traced workload computed a wrong result: the tracer
// disturbed the program it traced.
var errChecksum = errors.New("the traced workload printed a wrong checksum")

// checkOutput looks for the workload's checksum in its standard output.
// Tools like gdb write there too, unbuffered, so the number may land inside
// one of their lines ("[0" + "Thread ... exited]"): any run of digits that
// equals it counts. The workloads' other numbers (gdb's "E a b", "R r"
// lines) are smaller than the checksum for every count the harness uses.
func checkOutput(stdout string, want int64) error {
	f, err := os.Open(stdout)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	w := strconv.FormatInt(want, 10)
	for sc.Scan() {
		for _, num := range strings.FieldsFunc(sc.Text(), notDigit) {
			if num == w {
				return nil
			}
		}
	}
	return fmt.Errorf("%w (want %s)", errChecksum, w)
}

func notDigit(r rune) bool { return r < '0' || r > '9' }
