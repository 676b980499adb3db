//go:build linux && amd64

package ptrace

import (
	"encoding/binary"
	"fmt"

	"github.com/utap/utap/probe"
)

// checkRseq refuses addr when it lies in a restartable-sequence critical
// section: a ptrace stop there counts as preemption, so the kernel
// aborts the sequence each time it resumes and the thread livelocks (or
// the out-of-line copy breaks its atomicity). The sections are those
// declared in the object's __rseq_cs descriptors (librseq and the kernel
// selftests emit them; glibc registers rseq but has none of its own).
// Descriptors built at run time elsewhere are not seen.
func (pl *planner) checkRseq(s *probe.Site, m mapping, addr uint64) error {
	oi := pl.tr.ld.objInfo(m.Path)
	if oi == nil || oi.rseq == nil || oi.rseq.Size == 0 {
		return nil
	}
	bias, ok := oi.bias(m)
	if !ok {
		return nil
	}
	// Read the descriptors from the process: they hold relocated
	// addresses there.
	b := make([]byte, oi.rseq.Size)
	if pl.p.mem.ReadAt(b, oi.rseq.Addr+bias) != nil {
		return nil
	}
	// struct rseq_cs { u32 version, flags; u64 start_ip, post_commit_offset, abort_ip; }
	for i := 0; i+32 <= len(b); i += 32 {
		start := binary.LittleEndian.Uint64(b[i+8:])
		n := binary.LittleEndian.Uint64(b[i+16:])
		if addr >= start && addr < start+n {
			return fmt.Errorf("%s: %w: %#x is inside an rseq critical section [%#x, %#x)",
				siteName(s), ErrRefused, addr, start, start+n)
		}
	}
	return nil
}
