//go:build linux && amd64

package proc

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Memory reads a tracee's memory with process_vm_readv (no stop needed, one
// syscall) and writes it through /proc/PID/mem, which, unlike
// process_vm_writev, may write into read-only and executable pages.
type Memory struct {
	pid int
	f   *os.File
}

// OpenMemory opens the memory of process pid.
func OpenMemory(pid int) (*Memory, error) {
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/mem", pid), os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return &Memory{pid: pid, f: f}, nil
}

// ReadOnly is pid's memory for reads only (process_vm_readv): no file
// is opened, nothing to close.
func ReadOnly(pid int) *Memory { return &Memory{pid: pid} }

// Close closes it; a nil Memory is fine.
func (m *Memory) Close() {
	if m != nil && m.f != nil {
		m.f.Close()
	}
}

// ReadAt fills p from addr; a partial read is an error.
func (m *Memory) ReadAt(p []byte, addr uint64) error {
	if len(p) == 0 {
		return nil
	}
	local := []unix.Iovec{{Base: unsafe.SliceData(p), Len: uint64(len(p))}}
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(p)}}
	n, err := unix.ProcessVMReadv(m.pid, local, remote, 0)
	if err != nil {
		return fmt.Errorf("read %#x: %w", addr, err)
	}
	if n != len(p) {
		return fmt.Errorf("read %#x: short read (%d of %d bytes)", addr, n, len(p))
	}
	return nil
}

// ReadScattered fills each of bufs from its address in addrs, in one
// system call for every 1024 of them (IOV_MAX); any failed or short read
// is an error.
func (m *Memory) ReadScattered(bufs [][]byte, addrs []uint64) error {
	for len(bufs) > 0 {
		k := min(len(bufs), 1024)
		local, remote := make([]unix.Iovec, k), make([]unix.RemoteIovec, k)
		want := 0
		for i, b := range bufs[:k] {
			local[i] = unix.Iovec{Base: unsafe.SliceData(b), Len: uint64(len(b))}
			remote[i] = unix.RemoteIovec{Base: uintptr(addrs[i]), Len: len(b)}
			want += len(b)
		}
		n, err := unix.ProcessVMReadv(m.pid, local, remote, 0)
		if err != nil {
			return fmt.Errorf("read %#x: %w", addrs[0], err)
		}
		if n != want {
			return fmt.Errorf("read %#x: short read (%d of %d bytes)", addrs[0], n, want)
		}
		bufs, addrs = bufs[k:], addrs[k:]
	}
	return nil
}

// WriteAt writes p at addr. The tracee's threads that could execute the
// bytes written must be stopped.
func (m *Memory) WriteAt(p []byte, addr uint64) error {
	n, err := unix.Pwrite(int(m.f.Fd()), p, int64(addr))
	if err != nil {
		return fmt.Errorf("write %#x: %w", addr, err)
	}
	if n != len(p) {
		return fmt.Errorf("write %#x: short write (%d of %d bytes)", addr, n, len(p))
	}
	return nil
}

// WritevAt writes bufs one after another from addr, in one system call
// for every 1024 of them (IOV_MAX): pieces of code laid out side by side
// need no copy into one buffer.
func (m *Memory) WritevAt(bufs [][]byte, addr uint64) error {
	for len(bufs) > 0 {
		part := bufs[:min(len(bufs), 1024)]
		want := 0
		for _, b := range part {
			want += len(b)
		}
		n, err := unix.Pwritev(int(m.f.Fd()), part, int64(addr))
		if err != nil {
			return fmt.Errorf("write %#x: %w", addr, err)
		}
		if n != want {
			return fmt.Errorf("write %#x: short write (%d of %d bytes)", addr, n, want)
		}
		bufs, addr = bufs[len(part):], addr+uint64(want)
	}
	return nil
}

// WriteChecked writes p at addr as the program's own store would:
// process_vm_writev, which fails (EFAULT) on a page the program cannot
// write, where /proc/PID/mem would write anyway.
func (m *Memory) WriteChecked(p []byte, addr uint64) error {
	local := []unix.Iovec{{Base: unsafe.SliceData(p), Len: uint64(len(p))}}
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(p)}}
	n, err := unix.ProcessVMWritev(m.pid, local, remote, 0)
	if err != nil {
		return fmt.Errorf("write %#x: %w", addr, err)
	}
	if n != len(p) {
		return fmt.Errorf("write %#x: short write (%d of %d bytes)", addr, n, len(p))
	}
	return nil
}

// ReadByMem reads through /proc/PID/mem: process_vm_readv refuses pages
// without read permission that ptrace access may still read.
func (m *Memory) ReadByMem(p []byte, addr uint64) error {
	n, err := unix.Pread(int(m.f.Fd()), p, int64(addr))
	if err != nil {
		return fmt.Errorf("read %#x: %w", addr, err)
	}
	if n != len(p) {
		return fmt.Errorf("read %#x: short read", addr)
	}
	return nil
}
