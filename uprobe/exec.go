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

// Following exec (Target.Follow). Uprobes are per file: a followed process
// that execs another program runs code no probe covers, although exec
// keeps its tgid in the traced set. A program on sched:sched_process_exec
// catches the exec of a traced tgid before the new image runs an
// instruction, stops the process with SIGSTOP (bpf_send_signal: the stop is
// taken on the way back to user space) and reports it through the execs
// ring. User space resolves the probes for the new image, attaches those in
// files no probe covers yet, and sends SIGCONT: nothing the new image does
// is missed. A file both images map (libc) is probed already, and its
// probes fire in the new image too (the programs filter on the tgid).
//
// An exec from a non-leader thread has made that thread the leader by the
// time the tracepoint fires, so current's tgid and pid are both the tgid.
//
// The stop is visible to the process's parent as a job-control stop:
// SIGCHLD with CLD_STOPPED then CLD_CONTINUED, and waitpid with WUNTRACED
// or WCONTINUED reports them while it lasts (a job-control shell may say
// the job stopped). Nothing else can hold a task from BPF.

const (
	execRingSize = 64 << 10 // records of 8 bytes: thousands of execs at once
	// execSiteRoom is how many sites new images may add to the counters
	// of -c, whose array is sized when the trace starts.
	execSiteRoom = 1 << 12
)

// execFollower is the exec tracker and what it knows of the files.
type execFollower struct {
	resolve   func(pid int) ([]probe.Site, error)
	retProbes bool // Engine.RetProbes
	prog      *ebpf.Program
	link      link.Link
	ring      *ringbuf.Reader
	started   bool
	done      chan struct{}
	closing   atomic.Bool

	seen   map[fileID]bool // executables whose images were handled
	probed map[fileID]bool // files with probes
	mu     sync.Mutex
	notes  []string
}

// fileID is what a uprobe is keyed on: the file, not its path.
type fileID struct{ dev, ino uint64 }

func fileOf(path string) (fileID, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return fileID{}, err
	}
	return fileID{st.Dev, st.Ino}, nil
}

// followExecs loads and attaches the exec tracker; its records wait in the
// ring until serveExecs.
func (s *session) followExecs(resolve func(pid int) ([]probe.Site, error), retProbes bool) error {
	ex := &execFollower{resolve: resolve, retProbes: retProbes, done: make(chan struct{}),
		seen: map[fileID]bool{}, probed: map[fileID]bool{}}
	for _, obj := range objects(s.sites) {
		if id, err := fileOf(obj); err == nil {
			ex.probed[id] = true
		}
	}
	spec := &ebpf.ProgramSpec{Name: "utap_exec", Type: ebpf.TracePoint, License: "GPL", Instructions: execInsns()}
	for _, name := range []string{mapTgids, mapExecs, mapStats} {
		if err := spec.Instructions.AssociateMap(name, *s.mapNamed(name)); err != nil {
			return err
		}
	}
	var err error
	if ex.prog, err = ebpf.NewProgram(spec); err != nil {
		return fmt.Errorf("loading the exec tracker: %w", verifierReason(err))
	}
	if ex.ring, err = ringbuf.NewReader(s.execs); err != nil {
		ex.prog.Close()
		return fmt.Errorf("opening the ring of followed execs: %w", err)
	}
	if ex.link, err = link.Tracepoint("sched", "sched_process_exec", ex.prog, nil); err != nil {
		ex.ring.Close()
		ex.prog.Close()
		return fmt.Errorf("attaching the exec tracker to sched:sched_process_exec: %w", hint(err))
	}
	s.ex = ex
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

// serveExecs starts serving the execs, once the first probes are in.
func (s *session) serveExecs() {
	if s.ex == nil || s.ex.started {
		return
	}
	s.ex.started = true
	go s.execLoop()
}

// execLoop handles each exec and, once closing, resumes whatever is left
// and returns when the ring has stayed empty for a poll: a tracker run
// that began before its link went can still submit for microseconds.
func (s *session) execLoop() {
	defer close(s.ex.done)
	var rec ringbuf.Record
	for {
		s.ex.ring.SetDeadline(time.Now().Add(pollInterval))
		err := s.ex.ring.ReadInto(&rec)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			if s.ex.closing.Load() {
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
			s.ex.note(fmt.Sprintf("pid %d was not held at its exec (bpf_send_signal: %v): its new image's first calls may be missing", pid, unix.Errno(-res)))
		}
		if !s.ex.closing.Load() {
			if err := s.traceImage(pid); err != nil {
				s.ex.note(fmt.Sprintf("pid %d: %v", pid, err))
			}
		}
		// ESRCH: it died while held, nothing to resume.
		unix.Kill(pid, unix.SIGCONT)
	}
}

// traceImage attaches the probes of pid's new image that are in files no
// probe covers yet. The process is held.
func (s *session) traceImage(pid int) error {
	ex := s.ex
	exe, err := fileOf(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return nil // gone
	}
	if ex.seen[exe] {
		return nil
	}
	path, _ := proc.Exe(pid)
	if ex.resolve == nil {
		ex.seen[exe] = true
		return fmt.Errorf("its new image %s is not traced: no way to resolve probes in it", path)
	}
	sites, err := ex.resolve(pid)
	if err != nil && !running(pid) {
		return nil // it died while held: the next exec of this file tries again
	}
	ex.seen[exe] = true // the same file resolves the same way: once is enough
	if err != nil {
		return fmt.Errorf("its new image %s is not traced: %w", path, err)
	}
	var fresh []probe.Site
	files := map[fileID]bool{}
	for _, site := range sites {
		id, err := fileOf(site.Object)
		if err != nil || ex.probed[id] {
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
		ex.probed[id] = true // once tried: an error is said once
	}
	if err := s.addImage(fresh, ex.retProbes || usesUnwinder(fresh, pid)); err != nil {
		return fmt.Errorf("its new image %s is not traced: %w", path, err)
	}
	return nil
}

// addImage generates, loads and attaches the programs of more sites.
func (s *session) addImage(sites []probe.Site, retProbes bool) error {
	plans, err := planAll(sites, retProbes)
	if err != nil {
		return err
	}
	n := len(s.placed)
	s.mu.Lock()
	if err = s.Spec.addSites(sites, plans); err == nil {
		s.sites = append(s.sites, sites...)
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if err := s.loadProgs(); err != nil {
		return err
	}
	return s.attachPlaced(s.placed[n:], []int{0})
}

// stopFollowingExecs detaches the exec tracker, resumes every process it
// stopped, and releases it.
func (s *session) stopFollowingExecs() error {
	ex := s.ex
	if ex == nil {
		return nil
	}
	err := ex.link.Close()
	ex.closing.Store(true)
	if !ex.started {
		ex.started = true
		go s.execLoop()
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

// execNotes are what following execs could not trace, for Result.Notices.
func (s *session) execNotes() []string {
	if s.ex == nil {
		return nil
	}
	s.ex.mu.Lock()
	defer s.ex.mu.Unlock()
	return append([]string(nil), s.ex.notes...)
}
