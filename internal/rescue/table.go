//go:build linux && amd64

package rescue

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Env names the tracer's descriptor of the table (the supervisor's
// ExtraFiles): taken out of the environment by Join, so that the traced
// command's is the user's.
const Env = "UTAP_RESCUE_FD"

// A Table lists the processes a tracer traces: a pid and its start time
// (so that a pid used again is not taken for it) per entry, in a shared
// mapping whose pages the kernel keeps when the tracer dies.
type Table struct {
	file *os.File
	mem  []byte
}

// entries fit the mapping: far more processes than a trace has at once.
const (
	tableSize = 64 << 10
	entrySize = 16
	entries   = tableSize / entrySize
)

type entry struct {
	pid   int32
	_     int32
	start uint64 // /proc/PID/stat's starttime
}

// New makes a table for a tracer to come, its file for ExtraFiles.
func New() (*Table, error) {
	fd, err := unix.MemfdCreate("utap-rescue", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "utap-rescue")
	if err := f.Truncate(tableSize); err != nil {
		f.Close()
		return nil, fmt.Errorf("utap-rescue: %w", err)
	}
	return mapTable(f)
}

func mapTable(f *os.File) (*Table, error) {
	mem, err := unix.Mmap(int(f.Fd()), 0, tableSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("mmap utap-rescue: %w", err)
	}
	return &Table{file: f, mem: mem}, nil
}

// File is the table's file, for the tracer's ExtraFiles.
func (t *Table) File() *os.File { return t.file }

func (t *Table) at(i int) *entry { return (*entry)(unsafe.Pointer(&t.mem[i*entrySize])) }

// The tracer's table, from Join; nil: none (not supervised, or tests).
var (
	mu     sync.Mutex
	joined *Table
)

// Join opens the table the supervisor passed (Env), if any, for Add and
// Remove; the descriptor is closed on exec, the variable unset.
func Join() error {
	v, ok := os.LookupEnv(Env)
	if !ok {
		return nil
	}
	os.Unsetenv(Env)
	fd, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("%s=%q: not a descriptor", Env, v)
	}
	unix.CloseOnExec(fd)
	t, err := mapTable(os.NewFile(uintptr(fd), "utap-rescue"))
	if err != nil {
		return err
	}
	mu.Lock()
	joined = t
	mu.Unlock()
	return nil
}

// Add lists pid, a process the tracer traces from now on (its code may
// get int3s).
func Add(pid int) {
	mu.Lock()
	defer mu.Unlock()
	if joined != nil {
		joined.add(pid)
	}
}

// Remove takes pid off the list: it exited, or was left with nothing of
// the tracer's in it.
func Remove(pid int) {
	mu.Lock()
	defer mu.Unlock()
	if joined != nil {
		joined.remove(pid)
	}
}

func (t *Table) add(pid int) {
	start, ok := startTime(pid)
	if !ok {
		return
	}
	free := -1
	for i := range entries {
		switch e := t.at(i); {
		case int(e.pid) == pid:
			e.start = start
			return
		case e.pid == 0 && free < 0:
			free = i
		}
	}
	if free >= 0 {
		e := t.at(free)
		e.start, e.pid = start, int32(pid)
	}
}

func (t *Table) remove(pid int) {
	for i := range entries {
		if e := t.at(i); int(e.pid) == pid {
			e.pid = 0
		}
	}
}

// startTime is /proc/PID/stat's starttime (field 22): with the pid, the
// process's identity.
func startTime(pid int) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name, in parentheses, may hold spaces: count after it.
	i := len(b) - 1
	for i >= 0 && b[i] != ')' {
		i--
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, false
	}
	v, err := strconv.ParseUint(f[19], 10, 64) // field 22: the 20th after the name
	return v, err == nil
}
