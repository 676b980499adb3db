//go:build linux && amd64

package uprobe

import (
	"fmt"
	"strings"
	"sync"

	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
)

// The hand-written programs read a few fields of struct task_struct (the
// exit code, the ids, the pending signals), whose offsets move between
// kernel builds: they come from the running kernel's BTF.

// taskStruct is the running kernel's struct task_struct.
var taskStruct = sync.OnceValues(func() (*btf.Struct, error) {
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		return nil, fmt.Errorf("reading the kernel's BTF (for task_struct): %w", err)
	}
	var ts *btf.Struct
	if err := spec.TypeByName("task_struct", &ts); err != nil {
		return nil, fmt.Errorf("kernel BTF: %w", err)
	}
	return ts, nil
})

// taskOffset is the byte offset in task_struct of the member at path, a
// member of a member for more names (pending, signal).
func taskOffset(path ...string) (int32, error) {
	st, err := taskStruct()
	if err != nil {
		return 0, err
	}
	off := uint32(0)
	for i, name := range path {
		var m *btf.Member
		for j := range st.Members {
			if st.Members[j].Name == name && st.Members[j].BitfieldSize == 0 {
				m = &st.Members[j]
				break
			}
		}
		if m == nil {
			return 0, fmt.Errorf("kernel BTF: no task_struct.%s", strings.Join(path, "."))
		}
		off += m.Offset.Bytes()
		if i == len(path)-1 {
			break
		}
		if st, _ = btf.UnderlyingType(m.Type).(*btf.Struct); st == nil {
			return 0, fmt.Errorf("kernel BTF: task_struct.%s is not a struct", strings.Join(path[:i+1], "."))
		}
	}
	return int32(off), nil
}

// readKernelWord reads the 8 bytes at the kernel address in R3 into R1,
// by way of slotTmp; on a fault it jumps to fail.
func readKernelWord(g *progGen, fail string) {
	g.emit(
		asm.Mov.Reg(asm.R1, asm.RFP),
		asm.Add.Imm(asm.R1, slotTmp),
		asm.Mov.Imm(asm.R2, 8),
		asm.FnProbeReadKernel.Call(),
		asm.JNE.Imm(asm.R0, 0, fail),
		asm.LoadMem(asm.R1, asm.RFP, slotTmp, asm.DWord),
	)
}
