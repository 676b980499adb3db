//go:build linux && amd64

package uprobe

import (
	"fmt"
	"os"

	"github.com/utap/utap/probe"
	"github.com/utap/utap/uretprobe"
)

// spot is one kernel probe a site needs.
type spot struct {
	off   uint64 // file offset
	addr  uint64 // link-time address, for messages
	insn  []byte // the instruction there
	uret  bool   // a uretprobe: fires after the function returns
	stamp bool   // the hidden entry probe of a return probe
	// refCtr is the file offset of a USDT semaphore the kernel increments
	// in every process the probe is in, and decrements when it comes out.
	refCtr uint64
}

// plan is where a site's probes go and how its calls are keyed.
type plan struct {
	spots []spot
	key   callKey
}

// planSite places a site's probes:
//   - an entry probe: one uprobe at the site;
//   - a return probe of a C function: a kernel uretprobe, and a stamp
//     uprobe at the entry for the duration;
//   - a return probe of a Go function (or with retProbes): a uprobe on
//     every RET of the function and the stamp after Go's stack-split
//     prologue (uretprobe.GoEntry), since a uretprobe's foreign return
//     address kills Go programs (golang/go#22008).
//
// Kernel uretprobes nest at most 64 deep per thread (MAX_URETPROBE_DEPTH):
// deeper calls' returns are not seen. RET probes have no such limit but
// miss a return made by a tail call out of the function.
func planSite(s *probe.Site, retProbes bool) (plan, error) {
	if s.Spec.Kind != probe.Return {
		insn, err := siteInsn(s)
		if err != nil {
			return plan{}, err
		}
		return plan{spots: []spot{{off: s.FileOffset, addr: s.Addr, insn: insn, refCtr: s.SemaphoreOffset}}}, nil
	}
	if s.Addr != s.FuncAddr {
		return plan{}, fmt.Errorf("%w: a return probe goes at a function's start, not at %s", ErrUnsupported, where(s))
	}
	var code []byte // the function's body, when the planner reads it
	rp, err := uretprobe.PlanReturn(s, s.FuncAddr, func() (b []byte, err error) {
		code, err = readCode(s.Object, s.FileOffset, int(s.FuncSize))
		return code, err
	}, uretprobe.Options{RetProbes: retProbes, NestLimit: true})
	if err != nil {
		return plan{}, err
	}
	if rp.Method == uretprobe.Hijack {
		insn, err := siteInsn(s)
		if err != nil {
			return plan{}, err
		}
		at := spot{off: s.FileOffset, addr: s.Addr, insn: insn}
		stamp, uret := at, at
		stamp.stamp, uret.uret = true, true
		return plan{spots: []spot{stamp, uret}, key: callKey{spAdjust: -8}}, nil
	}
	at := func(addr uint64) spot {
		i := addr - s.FuncAddr
		return spot{off: s.FileOffset + i, addr: addr, insn: code[i:min(i+15, uint64(len(code)))]}
	}
	p := plan{key: callKey{goroutine: s.GoFunc}}
	stamp := at(rp.Entry)
	stamp.stamp = true
	p.spots = append(p.spots, stamp)
	for _, r := range rp.Rets {
		p.spots = append(p.spots, at(r))
	}
	return p, nil
}

// siteInsn returns the instruction bytes at s, read from its file when
// elfsym did not keep them.
func siteInsn(s *probe.Site) ([]byte, error) {
	if len(s.Insn) > 0 {
		return s.Insn, nil
	}
	return readCode(s.Object, s.FileOffset, 15)
}

func readCode(path string, off uint64, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	got, err := f.ReadAt(b, int64(off))
	if got == 0 {
		return nil, fmt.Errorf("reading the code at %s+%#x: %w", path, off, err)
	}
	return b[:got], nil
}
