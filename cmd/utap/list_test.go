//go:build linux && amd64

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/utap/utap/internal/fixture"
)

func TestListBinary(t *testing.T) {
	bin := fixture.C(t, "cli_work.c")
	r := utap(t, "list", bin, "work")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if !strings.HasPrefix(lines[0], "OBJECT") || len(lines) < 2 {
		t.Fatalf("no table: %q", r.stdout)
	}
	f := strings.Fields(lines[1])
	if f[1] != "work" || f[2] != "func" || !strings.Contains(lines[1], "a, b") {
		t.Errorf("row %q: want work func ... with params a, b", lines[1])
	}
}

func TestListJSON(t *testing.T) {
	bin := fixture.C(t, "cli_work.c")
	r := utap(t, "list", "--format", "json", bin, "gree*")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var s struct {
		Object, Name, Kind string
		Addr               uint64
	}
	if err := json.Unmarshal([]byte(strings.Split(r.stdout, "\n")[0]), &s); err != nil {
		t.Fatal(err)
	}
	if s.Name != "greet" || s.Kind != "func" || s.Addr == 0 || s.Object != bin {
		t.Errorf("got %+v", s)
	}
}

// TestListPIDMalloc is the check: utap list --pid $$ malloc shows
// libc's malloc with its loaded address (the test's own process is Go, with
// no libc, so a shell stands in for $$).
func TestListPIDMalloc(t *testing.T) {
	sh := exec.Command("sh", "-c", "read x")
	stdin, err := sh.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); sh.Wait() }()
	waitMapped(t, sh.Process.Pid, "libc.so")
	r := utap(t, "list", "--pid", fmt.Sprint(sh.Process.Pid), "malloc")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "LOADED AT") {
		t.Errorf("no loaded-address column: %s", r.stdout)
	}
	found := false
	for _, line := range strings.Split(r.stdout, "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && strings.Contains(f[0], "libc.so") && f[1] == "malloc" {
			found = true
			var addr uint64
			fmt.Sscanf(f[3], "0x%x", &addr)
			if addr < 0x10000 {
				t.Errorf("malloc at %#x does not look loaded", addr)
			}
		}
	}
	if !found {
		t.Errorf("libc malloc not listed:\n%s", r.stdout)
	}
}

// waitMapped waits until pid has mapped an object whose path contains name.
func waitMapped(t *testing.T, pid int, name string) {
	t.Helper()
	for i := 0; i < 500; i++ {
		maps, _ := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
		if strings.Contains(string(maps), name) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d never mapped %s", pid, name)
}

func TestListBadInput(t *testing.T) {
	oneErrorLine(t, utap(t, "list", "/nonexistent"), "/nonexistent")
	oneErrorLine(t, utap(t, "list", "/etc/passwd"), "/etc/passwd", "not an ELF")
	oneErrorLine(t, utap(t, "list", "--pid", "999999"), "999999")
	oneErrorLine(t, utap(t, "list"), "BINARY")
	oneErrorLine(t, utap(t, "list", "--format", "xml", "/bin/ls"), "xml")
}

// TestListLibraryByShortName: `utap list libc malloc` finds libc as the
// loader would; a flag after the names is one clear error.
func TestListLibraryByShortName(t *testing.T) {
	r := utap(t, "list", "libc", "malloc")
	if r.code != 0 || !strings.Contains(r.stdout, "libc.so.6") || !strings.Contains(r.stdout, "malloc") {
		t.Errorf("list libc malloc: %+v", r)
	}
	oneErrorLine(t, utap(t, "list", "libc", "str*", "--format", "json"), "--format", "flags come first")
}

func TestListUSDT(t *testing.T) {
	bin := fixture.C(t, "usdt_fixture.c", "-O1", "-g")
	r := utap(t, "list", bin, "fixture:gu*")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "PARAMS/ARGS") {
		t.Fatalf("table %q", r.stdout)
	}
	f := strings.Fields(lines[1])
	if f[1] != "fixture:guarded" || f[2] != "usdt" || !strings.Contains(lines[1], "-4@%edi  semaphore 0x") {
		t.Errorf("row %q", lines[1])
	}
	r = utap(t, "list", "--format", "json", bin, "usdt:fixture:two")
	var s struct {
		Name, Kind string
		Args       []string
	}
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || s.Name != "fixture:two" || s.Kind != "usdt" || len(s.Args) != 2 {
		t.Errorf("json %q: %+v %v", r.stdout, s, err)
	}
}

// TestListSyscalls: `utap list syscall:PATTERN` shows the calls a spec
// with that pattern selects, with their numbers and arguments.
func TestListSyscalls(t *testing.T) {
	r := utap(t, "list", "syscall:openat")
	if r.code != 0 || !strings.Contains(r.stdout, "257  openat") || !strings.Contains(r.stdout, "arg2 const char * filename") {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	oneErrorLine(t, utap(t, "list", "syscall:opnat"), `"opnat"`, "openat")
}

// The PAD column: work's entry takes a pad; a PLT stub does not, and JSON
// says why.
func TestListPad(t *testing.T) {
	bin := fixture.C(t, "cli_work.c")
	r := utap(t, "list", bin, "work")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || !strings.Contains(lines[0], "PAD") || strings.Fields(lines[1])[5] != "yes" {
		t.Fatalf("exit %d: %q", r.code, r.stdout)
	}
	r = utap(t, "list", "--format", "json", bin, "*@plt")
	var s struct {
		Kind   string
		Pad    bool
		PadWhy string `json:"pad_why"`
	}
	if err := json.Unmarshal([]byte(strings.Split(r.stdout, "\n")[0]), &s); err != nil || s.Kind != "plt" || s.Pad || s.PadWhy == "" {
		t.Errorf("json %q: %+v %v", r.stdout, s, err)
	}
}
