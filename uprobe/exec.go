//go:build linux && amd64

package uprobe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/probe"
	"github.com/utap/utap/uretprobe"
	"golang.org/x/sys/unix"
)

// Following exec. Uprobes are per file: a traced process that execs
// another program runs code no probe covers, although exec keeps its pid
// (strace and the ptrace engine trace on through it, -f or not). With
// Target.Follow that is every followed process, whose new image's probes
// cover every process (the programs filter on the tgid); without, only
// the traced pids are in the tgid map, and a new image's probes are
// attached for the pid that exec'd it, as its first probes were.
//
// A program on the sched_process_exec tracepoint catches the exec of a
// traced tgid before the new image runs an instruction, stops the process
// with SIGSTOP (bpf_send_signal: the stop is taken on the way back to user
// space) and reports it through the execs ring. User space resolves the
// probes for the new image, attaches those in files no probe covers yet
// (for that pid), and sends SIGCONT: nothing the new image does is missed.
// A file both images map (libc) is probed already, and its probes fire in
// the new image too (a link's pid filter is the task's, whatever its mm).
//
// An exec from a non-leader thread has made that thread the leader by the
// time the tracepoint fires, so current's tgid and pid are both the tgid.
//
// This tracker holds attached processes ptrace cannot seize; a launched
// command's execs, and those of attached processes it can, are held by
// ptrace instead (hold.go, holdattach.go), which their parents do not see. The tracker's stop is visible to the process's parent as a job-control stop:
// SIGCHLD with CLD_STOPPED then CLD_CONTINUED, and waitpid with WUNTRACED
// or WCONTINUED reports them while it lasts (a job-control shell may say
// the job stopped). Nothing else can hold a task from BPF. Under utap run
// the parent is utap; an attached process's parent may see it.

const (
	execRingSize = 64 << 10 // records of 8 bytes: thousands of execs at once
	// execSiteRoom is how many sites new images may add to the counters
	// of -c, whose array is sized when the trace starts.
	execSiteRoom = 1 << 12
)

// execFollower owns the exec tracker: its program, link and ring, the
// loop that holds each exec until its new image is probed, and what it
// knows of the files. add places a new image's probes (session.addImage).
type execFollower struct {
	resolve   func(pid int) ([]probe.Site, error)
	add       func(sites []probe.Site, retProbes bool, pids []int) error
	retProbes bool // Engine.RetProbes
	follow    bool // Target.Follow: probes for every process, not per pid
	prog      *ebpf.Program
	link      link.Link
	ring      *ringbuf.Reader
	started   bool
	done      chan struct{}
	closing   atomic.Bool
	// hold, for a launched command, holds its execs by ptrace instead of
	// the tracker's SIGSTOP (hold.go); no tracker is loaded then.
	hold *execHold
	// attached: the processes were attached to, not launched; their hold
	// is chosen once the probes are in (holdExecs).
	attached bool

	seen   map[image]bool // executables whose images were handled
	probed map[image]bool // files with probes
	mu     sync.Mutex
	notes  []string
}

// fileID is what a uprobe is keyed on: the file, not its path.
type fileID struct{ dev, ino uint64 }

// image is a file as probed for one pid, or for every traced process
// (pid 0: the first probes, and every probe with Follow).
type image struct {
	file fileID
	pid  int
}

// key is the image of file for pid's probes.
func (ex *execFollower) key(file fileID, pid int) image {
	if ex.follow {
		pid = 0
	}
	return image{file, pid}
}

// isProbed says whether pid runs the probes of file already.
func (ex *execFollower) isProbed(file fileID, pid int) bool {
	return ex.probed[image{file, 0}] || ex.probed[ex.key(file, pid)]
}

func fileOf(path string) (fileID, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return fileID{}, err
	}
	return fileID{st.Dev, st.Ino}, nil
}

// followExecs loads and attaches the exec tracker, with o's maps, for a
// trace with probes in sites; its records wait in the ring until serve.
// Without tracker (a launched command, held by ptrace: hold.go) it only
// records the files probed.
func followExecs(o *kernelObjs, sites []probe.Site, ex *execFollower, tracker bool) error {
	ex.done = make(chan struct{})
	ex.seen, ex.probed = map[image]bool{}, map[image]bool{}
	for _, obj := range objects(sites) {
		if id, err := fileOf(obj); err == nil {
			ex.probed[image{id, 0}] = true
		}
	}
	if !tracker {
		return nil
	}
	// A raw tracepoint: no tracefs needed to find it, which every trace
	// now relies on (a tracepoint's id is read from tracefs).
	spec := &ebpf.ProgramSpec{Name: "utap_exec", Type: ebpf.RawTracepoint, License: "GPL", Instructions: execInsns()}
	for _, name := range []string{mapTgids, mapExecs, mapStats} {
		if err := spec.Instructions.AssociateMap(name, *o.mapNamed(name)); err != nil {
			return err
		}
	}
	var err error
	if ex.prog, err = ebpf.NewProgram(spec); err != nil {
		return fmt.Errorf("loading the exec tracker: %w", verifierReason(err))
	}
	if ex.ring, err = ringbuf.NewReader(o.execs); err != nil {
		ex.prog.Close()
		return fmt.Errorf("opening the ring of followed execs: %w", err)
	}
	if ex.link, err = link.AttachRawTracepoint(link.RawTracepointOptions{Name: "sched_process_exec", Program: ex.prog}); err != nil {
		ex.ring.Close()
		ex.prog.Close()
		return fmt.Errorf("attaching the exec tracker to sched:sched_process_exec: %w", hint(err))
	}
	return nil
}

// execInsns: for a traced tgid, reserve a record (u32 tgid, s32 result of
// bpf_send_signal), stop the process and submit; with no room in the ring,
// count the exec as not held rather than stop a process no one resumes.
func execInsns() asm.Instructions {
	return append(append(ifTracedTgid(), asm.Instructions{
		mapPtr(asm.R1, mapExecs),
		asm.Mov.Imm(asm.R2, 8),
		asm.Mov.Imm(asm.R3, 0),
		asm.FnRingbufReserve.Call(),
		asm.JEq.Imm(asm.R0, 0, "full"),
		asm.Mov.Reg(asm.R7, asm.R0),
		asm.LoadMem(asm.R1, asm.RFP, -8, asm.Word),
		asm.StoreMem(asm.R7, 0, asm.R1, asm.Word),
		asm.Mov.Imm(asm.R1, int32(unix.SIGSTOP)),
		asm.FnSendSignal.Call(),
		asm.StoreMem(asm.R7, 4, asm.R0, asm.Word),
		asm.Mov.Reg(asm.R1, asm.R7),
		asm.Mov.Imm(asm.R2, 2), // BPF_RB_FORCE_WAKEUP: the process waits
		asm.FnRingbufSubmit.Call(),
		asm.Ja.Label("exit"),
	}...), countAndExit("full", -16, statUnheld)...)
}

// serve starts serving the execs, once the first probes are in.
func (ex *execFollower) serve() {
	if ex == nil || ex.ring == nil || ex.started {
		return
	}
	ex.started = true
	go ex.loop()
}

// loop handles each exec and, once closing, resumes whatever is left
// and returns when the ring has stayed empty for a poll: a tracker run
// that began before its link went can still submit for microseconds.
func (ex *execFollower) loop() {
	defer close(ex.done)
	var rec ringbuf.Record
	for {
		ex.ring.SetDeadline(time.Now().Add(pollInterval))
		err := ex.ring.ReadInto(&rec)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			if ex.closing.Load() {
				return
			}
			continue
		}
		if err != nil {
			return // closed
		}
		if len(rec.RawSample) < 8 {
			continue
		}
		pid := int(binary.LittleEndian.Uint32(rec.RawSample))
		if res := int32(binary.LittleEndian.Uint32(rec.RawSample[4:])); res != 0 {
			ex.note(fmt.Sprintf("pid %d was not held at its exec (bpf_send_signal: %v): its new image's first calls may be missing", pid, unix.Errno(-res)))
		}
		if !ex.closing.Load() {
			if err := ex.traceImage(pid); err != nil {
				ex.note(fmt.Sprintf("pid %d: %v", pid, err))
			}
		}
		// ESRCH: it died while held, nothing to resume.
		unix.Kill(pid, unix.SIGCONT)
	}
}

// held places the probes of pid's new image while ptrace holds it at
// its exec (hold.go).
func (ex *execFollower) held(pid int) {
	if err := ex.traceImage(pid); err != nil {
		ex.note(fmt.Sprintf("pid %d: %v", pid, err))
	}
}

// traceImage attaches the probes of pid's new image that are in files no
// probe covers yet. The process is held.
func (ex *execFollower) traceImage(pid int) error {
	exe, err := fileOf(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return nil // gone
	}
	if ex.seen[ex.key(exe, pid)] {
		return nil
	}
	path, _ := proc.Exe(pid)
	if ex.resolve == nil {
		ex.seen[ex.key(exe, pid)] = true
		return fmt.Errorf("its new image %s is not traced: no way to resolve probes in it", path)
	}
	sites, err := ex.resolve(pid)
	if err != nil && !running(pid, pid) {
		return nil // it died while held: the next exec of this file tries again
	}
	ex.seen[ex.key(exe, pid)] = true // the same file resolves the same way: once is enough
	if err != nil {
		return fmt.Errorf("its new image %s is not traced: %w", path, err)
	}
	var fresh []probe.Site
	files := map[fileID]bool{}
	for _, site := range sites {
		id, err := fileOf(site.Object)
		if err != nil || ex.isProbed(id, pid) {
			continue
		}
		if site.IFunc {
			// Its implementation is chosen by the loader, later.
			ex.note(fmt.Sprintf("probe %s in %s (pid %d's new image) is an IFUNC; not traced there", site.Spec.Text, site.Object, pid))
			continue
		}
		files[id] = true
		fresh = append(fresh, site)
	}
	if len(fresh) == 0 {
		return nil
	}
	for id := range files {
		ex.probed[ex.key(id, pid)] = true // once tried: an error is said once
	}
	pids := []int{0} // the programs filter on the tgid
	if !ex.follow {
		pids = []int{pid}
	}
	if err := ex.add(fresh, ex.retProbes || usesUnwinder(fresh, pid), pids); err != nil {
		return fmt.Errorf("its new image %s is not traced: %w", path, err)
	}
	return nil
}

// stop detaches the exec tracker, resumes every process it stopped, and
// releases it.
func (ex *execFollower) stop() error {
	if ex == nil {
		return nil
	}
	if ex.link == nil {
		ex.hold.stop()
		return nil
	}
	err := ex.link.Close()
	ex.closing.Store(true)
	if !ex.started {
		ex.started = true
		go ex.loop()
	}
	<-ex.done
	ex.ring.Close()
	ex.prog.Close()
	return err
}

// usesUnwinder is uretprobe.UsesUnwinder for the return probes of pid's
// new image, which decides how they are placed.
func usesUnwinder(sites []probe.Site, pid int) bool {
	for i := range sites {
		if sites[i].Spec.Kind == probe.Return {
			return uretprobe.UsesUnwinder(nil, objects(sites), []int{pid})
		}
	}
	return false
}

func (ex *execFollower) note(line string) {
	ex.mu.Lock()
	ex.notes = append(ex.notes, line)
	ex.mu.Unlock()
}

// notices are what following execs could not trace, for Result.Notices.
func (ex *execFollower) notices() []string {
	if ex == nil {
		return nil
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return append([]string(nil), ex.notes...)
}
