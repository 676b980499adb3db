//go:build linux && amd64

package uprobe

import (
	"fmt"
	"sync"

	"github.com/cilium/ebpf/btf"
)

// retInst are the offsets that lead from a task to its uretprobes'
// return instances (kernel/events/uprobes.c), from the kernel's BTF.
type retInst struct {
	utask int32 // task_struct.utask
	list  int32 // uprobe_task.return_instances
	stack int32 // return_instance.stack, followed by orig_ret_vaddr
	next  int32 // return_instance.next
}

var retInstOffsets = sync.OnceValues(func() (retInst, error) {
	var ro retInst
	var err error
	if ro.utask, err = taskOffset("utask"); err != nil {
		return ro, err
	}
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		return ro, fmt.Errorf("reading the kernel's BTF: %w", err)
	}
	offs := map[string]int32{}
	for _, n := range []string{"uprobe_task", "return_instance"} {
		var st *btf.Struct
		if err := spec.TypeByName(n, &st); err != nil {
			return ro, fmt.Errorf("kernel BTF: %w", err)
		}
		for _, m := range st.Members {
			offs[n+"."+m.Name] = int32(m.Offset.Bytes())
		}
	}
	var ok [4]bool
	ro.list, ok[0] = offs["uprobe_task.return_instances"]
	ro.stack, ok[1] = offs["return_instance.stack"]
	orig, ok2 := offs["return_instance.orig_ret_vaddr"]
	ro.next, ok[3] = offs["return_instance.next"]
	ok[2] = ok2 && orig == ro.stack+8
	if ok != [4]bool{true, true, true, true} {
		return ro, fmt.Errorf("kernel BTF: no return_instance layout this engine reads")
	}
	return ro, nil
})
