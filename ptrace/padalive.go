//go:build linux && amd64

package ptrace

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/utap/utap/internal/pad"
	"github.com/utap/utap/internal/rescue"
)

// The pads read memory with plain loads while the tracer lives, and the
// tracer fixes up a load that faults (readFixup); a dead tracer fixes up
// nothing, so the pads must know the moment it dies, whatever kills it.
// The kernel tells them: each ring's liveness word (pad.OffTracer) holds
// the id of the tracer's ptrace thread and sits on that thread's robust
// futex list, which the kernel walks when the thread exits, setting
// FUTEX_OWNER_DIED in place of the id (the pads then read through
// process_vm_readv). The list's nodes are in the rings themselves
// (pad.OffTracerNode, futex offset -8); its head is a page of utap's.

// robustHead is struct robust_list_head: the list (a circular list of
// nodes through their first word), the futex offset, the pending op.
type robustHead struct {
	mu    sync.Mutex
	page  []byte
	nodes []*uint64 // the nodes, in list order
}

var robust robustHead

const robustHeadSize = 24

func (h *robustHead) addr() uint64 { return uint64(uintptr(unsafe.Pointer(&h.page[0]))) }

// link rewrites the list through h.nodes.
func (h *robustHead) link() {
	next := h.addr() // the last node points back to the head
	for i := len(h.nodes) - 1; i >= 0; i-- {
		atomic.StoreUint64(h.nodes[i], next)
		next = uint64(uintptr(unsafe.Pointer(h.nodes[i])))
	}
	binary.LittleEndian.PutUint64(h.page[0:], next)
}

// aliveOn makes the calling thread (the tracer's ptrace thread, locked)
// the owner of the liveness words: the robust list is registered for it.
func aliveOn() (tid int, err error) {
	h := &robust
	h.mu.Lock()
	defer h.mu.Unlock()
	tid = unix.Gettid()
	if h.page == nil {
		p, err := unix.Mmap(-1, 0, unix.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			return 0, fmt.Errorf("a page for the robust futex list: %w", err)
		}
		h.page = p
		off := int64(pad.OffTracer - pad.OffTracerNode)
		binary.LittleEndian.PutUint64(h.page[8:], uint64(off))
		h.link()
	}
	// Every time: a thread id remembered could be a new thread's by now.
	if _, _, e := unix.Syscall(unix.SYS_SET_ROBUST_LIST, uintptr(h.addr()), robustHeadSize, 0); e != 0 {
		return 0, fmt.Errorf("set_robust_list: %w", e)
	}
	return tid, nil
}

// aliveAdd puts the liveness word of the ring mapped here at view on the
// list, holding tid: the pads read by loads from now on.
func aliveAdd(view []byte, tid int) {
	aliveAddAt((*uint32)(unsafe.Pointer(&view[pad.OffTracer])), (*uint64)(unsafe.Pointer(&view[pad.OffTracerNode])), tid)
}

// aliveAddAt puts word, whose list node is node (8 bytes after it, as a
// ring's), on the list, holding tid.
func aliveAddAt(word *uint32, node *uint64, tid int) {
	h := &robust
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nodes = append(h.nodes, node)
	h.link()
	atomic.StoreUint32(word, uint32(tid))
}

// aliveOff clears the word of the ring at view (the pads read by system
// calls from now on) and takes it off the list, before view is unmapped.
func aliveOff(view []byte) {
	if len(view) == 0 {
		return
	}
	aliveOffAt((*uint32)(unsafe.Pointer(&view[pad.OffTracer])), (*uint64)(unsafe.Pointer(&view[pad.OffTracerNode])))
}

// aliveOffAt clears word and takes its node off the list.
func aliveOffAt(word *uint32, node *uint64) {
	h := &robust
	h.mu.Lock()
	defer h.mu.Unlock()
	atomic.StoreUint32(word, 0)
	for i, n := range h.nodes {
		if n == node {
			h.nodes = append(h.nodes[:i], h.nodes[i+1:]...)
			h.link()
			return
		}
	}
}

// rescueOn puts the supervisor's liveness word (rescue.Live) on this
// thread's robust list: the supervisor undoes the int3s the moment the
// thread dies (rescue.Table.Watch). The returned func clears it, at a
// clean end.
func rescueOn() func() {
	word, node := rescue.Live()
	if word == nil {
		return func() {}
	}
	tid, err := aliveOn()
	if err != nil {
		return func() {}
	}
	aliveAddAt(word, node, tid)
	rescue.Announce()
	return func() { aliveOffAt(word, node) }
}

// addFixups puts a pad's exception table, offsets in the pad written at
// `at`, into the process's (readFixup's).
func (pp *padProc) addFixups(at uint64, fs []pad.Fixup) {
	for _, f := range fs {
		if pp.fixups == nil {
			pp.fixups = map[uint64]uint64{}
		}
		pp.fixups[at+uint64(f.At)] = at + uint64(f.To)
	}
}

// readFixup takes a fault of a pad's load of the process's memory (a bad
// pointer in a fetch): the thread goes on at the load's fix-up, which
// says the read failed, and the signal is swallowed. It reports whether
// the fault was such a load's.
func (pd *padEngine) readFixup(th *thread, regs *unix.PtraceRegs, sig int) bool {
	if sig != int(unix.SIGSEGV) && sig != int(unix.SIGBUS) {
		return false
	}
	to, ok := th.p.pads.fixups[regs.Rip]
	if !ok {
		return false
	}
	regs.Rip = to
	pd.tr.setRegs(th, regs)
	if r := th.p.pads.ring; r != nil {
		if ps := th.p.pads.padOf(regs.Rip); ps != nil {
			pad.SetFaulted(r.View(), ps.id)
		} else if ps := th.p.pads.retPadOf(regs.Rip); ps != nil {
			pad.SetFaulted(r.View(), ps.id+1) // the return pad's id
		} else if s := th.p.pads.sys.holding(regs.Rip); s != nil {
			pad.SetFaulted(r.View(), s.id)
		}
	}
	pd.tr.stats.padFixups++
	return true
}
