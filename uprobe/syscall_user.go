//go:build linux && amd64

package uprobe

import (
	"bytes"
	"encoding/binary"

	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/internal/syscalls"
	"github.com/utap/utap/probe"
	"golang.org/x/sys/unix"
)

// What a call's record lacks, completed in user space as the reader
// decodes it: the process is usually still there, a little later than the
// call.

// readFailed reads again, from user space, the captures the kernel could
// not read. The tracepoint programs cannot sleep, so bpf_probe_read_user
// fails on a page that is not present (a buffer in .bss or fresh heap never
// touched, a swapped-out page) even when the call itself would read it; a
// sleepable program is not possible on a tracepoint, and the record is
// already on its way. process_vm_readv faults the page in for us, as the
// ptrace engine's reads do. The race: the memory is read after the call,
// so an entry buffer the process reused meanwhile shows its newer bytes;
// when the process is gone (or the read fails) the argument stays an
// address, as before.
func (y *sysSession) readFailed(pid int, sys *probe.Syscall, failed []int, sp uint64) {
	if sys.Nr == unix.SYS_EXECVE && sys.Returned && sys.Ret == 0 {
		y.execFailed(pid, sys, failed)
		return
	}
	if len(failed) == 0 {
		return
	}
	in := syscalls.Lookup(sys.Nr)
	if in == nil {
		return
	}
	read := readMem(pid)
	for _, i := range failed {
		if i >= len(in.Captures) {
			continue
		}
		c := in.Captures[i]
		if c.Exit && (!sys.Returned || sys.Ret < 0) {
			continue // a failed call wrote no output
		}
		if c.StrArray {
			continue // argv and envp: at exec, in an image that is gone
		}
		b := syscalls.FromResult(c, sys.Nr, sys.Ret)
		if b == nil {
			b = syscalls.Read(c, sys.Args, sys.Ret, sp, y.strLen, read)
		}
		if b == nil {
			continue
		}
		if c.Exit {
			sys.Exit[i] = b
		} else {
			sys.Entry[i] = b
		}
	}
}

// execFailed completes an execve that succeeded: the old image, where
// its arguments were, is gone, but the kernel copied them to the new
// one's stack (syscalls.ExecCall), which /proc shows without a stop. The
// race: a program that rewrote its argv since shows the new text. A
// string of argv or envp the kernel could not read comes as an empty one
// (its array was read): those arrays are taken again too.
func (y *sysSession) execFailed(pid int, sys *probe.Syscall, failed []int) {
	for i, b := range sys.Entry {
		if len(b) > 0 && (b[0] == 0 || bytes.Contains(b, []byte{0, 0})) {
			failed = append(failed, i)
		}
	}
	if len(failed) == 0 {
		return
	}
	sp, execfn, err := proc.StartStack(pid)
	if err != nil {
		return
	}
	c := syscalls.ExecCall(sp, execfn, y.strLen, readMem(pid))
	if c == nil {
		return
	}
	for _, i := range failed {
		if i < len(c.Entry) && i < len(sys.Entry) && c.Entry[i] != nil {
			sys.Entry[i] = c.Entry[i]
		}
	}
}

// readMem reads pid's memory with process_vm_readv.
func readMem(pid int) syscalls.ReadFunc {
	mem := proc.ReadOnly(pid)
	return func(addr uint64, p []byte) error { return mem.ReadAt(p, addr) }
}

// fullDirents makes a getdents capture count every entry the call
// returned. The record holds at most sysMaxCapture bytes of the buffer
// (a per-CPU value is 32 KiB), so the exit program walks the whole
// returned buffer's d_reclen chain and records the count at
// sysOffDirents (syscalls.WithDirents).
func (y *sysSession) fullDirents(sys *probe.Syscall, raw []byte) {
	i := syscalls.DirentCapture(sys.Nr)
	if i < 0 || i >= len(sys.Exit) || sys.Exit[i] == nil || !sys.Returned || sys.Ret <= 0 {
		return
	}
	sys.Exit[i] = syscalls.WithDirents(sys.Exit[i], int(binary.LittleEndian.Uint64(raw[sysOffDirents:])))
}

// ended ends the lines of the calls still in progress when the links
// are gone (their entries stay in the open map, and no exit will send
// them) whose threads run on untraced, as the ptrace engine and strace
// end them: "<detached ...>". It returns how many it could not show, for
// the trace's notices: a call whose probe has a condition (known only
// at its exit), or whose thread died in it (another thread's
// exit_group: its "= ?" would come after the thread's end, which
// strace shows after it).
func (y *sysSession) ended(emit func(*probe.Event)) int {
	if y.open == nil {
		return 0
	}
	var key uint64
	var val []byte
	n := 0
	for it := y.open.Iterate(); it.Next(&key, &val); {
		var ev probe.Event
		if emit == nil || y.decode(val, &ev) != nil || ev.Sys.Returned || !syscalls.Plain(&y.sites[y.calls[ev.Sys.Nr].site]) ||
			!running(ev.PID, ev.TID) {
			n++
			continue
		}
		ev.Kind, ev.DurationNs, ev.Sys.Exit, ev.Sys.Detached = probe.Return.String(), 0, nil, true
		emit(&ev)
	}
	return n
}
