//go:build linux && amd64

package proc

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestStartInject starts a command held at its exec, runs getpid in it as
// an injected system call, releases it, and sees it run to completion with
// its output intact.
func TestStartInject(t *testing.T) {
	runtime.LockOSThread() // ptrace requests come from the tracer thread
	defer runtime.UnlockOSThread()
	var out bytes.Buffer
	c, err := Start(Command{Argv: []string{"echo", "held"}, Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	copied := c.Output()
	mem, err := OpenMemory(c.Pid)
	if err != nil {
		c.Kill()
		t.Fatal(err)
	}
	defer mem.Close()
	entry, err := Entry(c.Pid)
	if err != nil {
		c.Kill()
		t.Fatal(err)
	}
	before := make([]byte, 3)
	mem.ReadByMem(before, entry)
	in := Injection{Tid: c.Pid, Mem: mem, At: entry,
		Held:   func(sig int) { t.Errorf("signal %d while injecting", sig) },
		Exited: func(ws unix.WaitStatus) { t.Errorf("exited while injecting: %v", ws) }}
	pid, err := in.Syscall(unix.SYS_GETPID)
	if err != nil || int(pid) != c.Pid {
		c.Kill()
		t.Fatalf("injected getpid = %d, %v; want %d", pid, err, c.Pid)
	}
	after := make([]byte, 3)
	mem.ReadByMem(after, entry)
	if !bytes.Equal(before, after) {
		t.Errorf("entry bytes % x after injecting, were % x", after, before)
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	if code, err := c.Wait(); code != 0 || err != nil {
		t.Fatalf("exit %d, %v", code, err)
	}
	<-copied
	if out.String() != "held\n" {
		t.Errorf("output %q", out.String())
	}
}

// TestFileMatcher matches a process's executable mapping by path, through
// a symlink, and by device and inode under another name.
func TestFileMatcher(t *testing.T) {
	maps, err := Maps(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	exe, err := Exe(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{exe, link} {
		if _, ok := MappingOf(maps, FileMatcher(path), 0x1000); !ok {
			t.Errorf("%s: no executable mapping found", path)
		}
	}
	renamed := append([]Mapping(nil), maps...)
	for i := range renamed {
		if renamed[i].Path == exe {
			renamed[i].Path = "/elsewhere/prog"
		}
	}
	if _, ok := MappingOf(renamed, FileMatcher(exe), 0x1000); !ok {
		t.Error("not matched by device and inode")
	}
}

// TestTracedByUs: a process seized by one of this process's threads (the
// tracer thread is seldom the main one) is ours; an untraced one is not.
func TestTracedByUs(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if tracedByUs(cmd.Process.Pid) {
		t.Fatal("an untraced process is ours")
	}
	if err := Seize(cmd.Process.Pid, 0); err != nil {
		t.Fatal(err)
	}
	defer Detach(cmd.Process.Pid, 0)
	if !tracedByUs(cmd.Process.Pid) {
		t.Errorf("seized by thread %d of %d, yet not ours", unix.Gettid(), os.Getpid())
	}
}
