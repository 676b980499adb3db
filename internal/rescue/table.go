//go:build linux && amd64

package rescue

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/proc"
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
	// undo: Undo's one run (the watch's, at the tracer's death, or the
	// supervisor's once it has reaped the tracer).
	undo     sync.Once
	restored []Restored
	// rescue: Rescue's one run, the processes it tended, how that ended.
	rescue  sync.Once
	tended  []int
	tendErr error
	// OnTend, if set, is told of the processes Rescue traces, once they
	// are seized and their int3s out, before it traces them to their end.
	OnTend func(pids []int)
}

// entries fit the mapping after its header: far more processes than a
// trace has at once. The header holds the tracer's liveness word (Live).
const (
	tableSize  = 64 << 10
	headerSize = 64
	entrySize  = 16
	entries    = (tableSize - headerSize) / entrySize
	offLive    = 0 // the liveness word, a robust futex's
	offNode    = 8 // its robust list node: the word at node-8, as the rings'
)

type entry struct {
	pid   int32
	flags uint32 // filtered
	start uint64 // /proc/PID/stat's starttime
}

// filtered: the process runs utap's seccomp filter, whose calls fail with
// ENOSYS without a tracer (Tend).
const filtered = 1

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

func (t *Table) at(i int) *entry {
	return (*entry)(unsafe.Pointer(&t.mem[headerSize+i*entrySize]))
}

// Live is the joined table's liveness word and its robust list node (nil
// when none): the tracer puts its ptrace thread's id in the word and the
// node on that thread's robust futex list, so the kernel marks the word
// FUTEX_OWNER_DIED and wakes the supervisor (Watch) the moment the
// thread dies, before the dying tracer lets its tracees go.
func Live() (word *uint32, node *uint64) {
	mu.Lock()
	defer mu.Unlock()
	if joined == nil {
		return nil, nil
	}
	return (*uint32)(unsafe.Pointer(&joined.mem[offLive])), (*uint64)(unsafe.Pointer(&joined.mem[offNode]))
}

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
func Add(pid int) { withJoined(func(t *Table) { t.add(pid) }) }

// Remove takes pid off the list: it exited, or was left with nothing of
// the tracer's in it.
func Remove(pid int) { withJoined(func(t *Table) { t.remove(pid) }) }

// Filtered marks pid, listed, as running utap's seccomp filter: its
// probed calls need a tracer from now on, the supervisor once the
// tracer is gone (Tend).
func Filtered(pid int) { withJoined(func(t *Table) { t.mark(pid) }) }

// withJoined runs f on the joined table, if any.
func withJoined(f func(*Table)) {
	mu.Lock()
	defer mu.Unlock()
	if joined != nil {
		f(joined)
	}
}

func (t *Table) mark(pid int) {
	for i := range entries {
		if e := t.at(i); int(e.pid) == pid {
			e.flags |= filtered
		}
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
			e.start, e.flags = start, 0
			return
		case e.pid == 0 && free < 0:
			free = i
		}
	}
	if free >= 0 {
		e := t.at(free)
		e.start, e.flags, e.pid = start, 0, int32(pid)
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
	f, err := proc.StatFields(pid, 20)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseUint(f[19], 10, 64) // field 22: the 20th after the name
	return v, err == nil
}
