//go:build linux && amd64

package uprobe

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
)

// With Target.Follow the probes are attached for every process and each
// program first checks the caller's tgid against a map. A small program on
// the task:task_newtask tracepoint adds the new process of every traced
// parent to that map as it is created, before it can run a probed
// instruction.

const cloneThread = 0x10000 // CLONE_THREAD: a new thread, not a process

// ifTracedTgid goes on only in a process of the tgids map, leaving its
// tgid at fp-8; any other jumps to "exit".
func ifTracedTgid() asm.Instructions {
	return append(asm.Instructions{
		asm.FnGetCurrentPidTgid.Call(),
		asm.Mov.Reg(asm.R1, asm.R0),
		asm.RSh.Imm(asm.R1, 32),
	}, ifTgidTraced()...)
}

// ifTgidTraced goes on only if the tgid in R1 is in the tgids map,
// leaving it at fp-8; any other jumps to "exit".
func ifTgidTraced() asm.Instructions {
	return asm.Instructions{
		asm.StoreMem(asm.RFP, -8, asm.R1, asm.Word),
		mapPtr(asm.R1, mapTgids),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -8),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "exit"),
	}
}

// followForks loads and attaches the fork tracker. The link is returned
// for the session to keep and close. It is on the raw tracepoint, whose
// arguments are the new task and the clone flags: no tracefs needed (a
// tracepoint's id and record format are read from tracefs), the new pid
// read from the task at its offset in the kernel's BTF.
func followForks(tgids *ebpf.Map) (*ebpf.Program, link.Link, error) {
	pidOff, err := taskOffset("pid")
	if err != nil {
		return nil, nil, err
	}
	spec := &ebpf.ProgramSpec{
		Name: "utap_fork", Type: ebpf.RawTracepoint, License: "GPL",
		Instructions: append(append(asm.Instructions{
			asm.Mov.Reg(asm.R6, asm.R1),
		}, ifTracedTgid()...),
			asm.LoadMem(asm.R1, asm.R6, 8, asm.DWord), // args[1]: clone_flags
			asm.JSet.Imm(asm.R1, cloneThread, "exit"),
			asm.LoadMem(asm.R3, asm.R6, 0, asm.DWord), // args[0]: the task
			asm.Add.Imm(asm.R3, pidOff),
			asm.Mov.Reg(asm.R1, asm.RFP),
			asm.Add.Imm(asm.R1, -8),
			asm.Mov.Imm(asm.R2, 4),
			asm.FnProbeReadKernel.Call(),
			asm.JNE.Imm(asm.R0, 0, "exit"),
			asm.StoreImm(asm.RFP, -16, 1, asm.Word),
			mapPtr(asm.R1, mapTgids),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, -8),
			asm.Mov.Reg(asm.R3, asm.RFP),
			asm.Add.Imm(asm.R3, -16),
			asm.Mov.Imm(asm.R4, 0), // BPF_ANY
			asm.FnMapUpdateElem.Call(),
			asm.Mov.Imm(asm.R0, 0).WithSymbol("exit"),
			asm.Return(),
		),
	}
	if err := spec.Instructions.AssociateMap(mapTgids, tgids); err != nil {
		return nil, nil, err
	}
	prog, err := ebpf.NewProgram(spec)
	if err != nil {
		return nil, nil, fmt.Errorf("loading the fork tracker: %w", verifierReason(err))
	}
	l, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: "task_newtask", Program: prog})
	if err != nil {
		prog.Close()
		return nil, nil, fmt.Errorf("attaching the fork tracker to the task_newtask tracepoint: %w", hint(err))
	}
	return prog, l, nil
}

// tracedSet is the processes a trace covers, kept in the tgids map (nil
// when links filter by PID and no program filters): the traced PIDs, and
// with Follow what the fork tracker adds.
type tracedSet struct {
	tgids  *ebpf.Map
	follow bool // Target.Follow: links cover every process
}

// add puts pids in the set and says what links filter on: the traced
// PIDs, or everyone when the programs filter through the tgid map.
func (t *tracedSet) add(pids []int) ([]int, error) {
	if t.tgids == nil {
		return pids, nil
	}
	for _, pid := range pids {
		if err := t.tgids.Put(uint32(pid), uint32(1)); err != nil {
			return nil, fmt.Errorf("adding pid %d to the traced set: %w", pid, err)
		}
	}
	if !t.follow {
		return pids, nil // the map is for the programs of system calls, process events and execs
	}
	return []int{0}, nil
}

// await waits, after the command itself has exited, until every
// process the fork tracker added has exited too (or ctx is done), taking
// exited ones out of the traced set as it goes.
func (t *tracedSet) await(ctx context.Context, pid int) {
	if t.tgids == nil {
		return
	}
	t.tgids.Delete(uint32(pid))
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for t.prune() {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// prune removes exited processes from the set and says whether any
// process in it is still running (false without the map).
func (t *tracedSet) prune() bool {
	if t.tgids == nil {
		return false
	}
	var k, v uint32
	var dead []uint32
	alive := false
	it := t.tgids.Iterate()
	for it.Next(&k, &v) {
		if running(int(k), int(k)) {
			alive = true
		} else {
			dead = append(dead, k)
		}
	}
	for _, k := range dead {
		t.tgids.Delete(k)
	}
	return alive
}

// running says whether thread tid of process pid exists and is not a
// zombie (tid pid: the process's leader, as /proc/PID/stat shows it).
func running(pid, tid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	state := b[i+2]
	return state != 'Z' && state != 'X'
}
