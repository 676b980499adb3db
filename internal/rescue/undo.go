//go:build linux && amd64

package rescue

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/utap/utap/internal/proc"
)

// Restored is what Undo did in one process.
type Restored struct {
	Pid   int
	Bytes int   // int3 bytes given their original back
	Err   error // what stopped it, if anything
}

// Undo takes the int3s out of every process of the table still the
// same (pid and start time): the tracer that wrote them is dead. It runs
// once; later calls return what it did.
func (t *Table) Undo() []Restored {
	t.undo.Do(func() { t.restored = t.undoAll() })
	return t.restored
}

func (t *Table) undoAll() []Restored {
	var out []Restored
	for i := range entries {
		e := t.at(i)
		if e.pid == 0 {
			continue
		}
		pid := int(e.pid)
		if start, ok := startTime(pid); !ok || start != e.start {
			continue // gone, or its pid another's now
		}
		n, err := restore(pid)
		out = append(out, Restored{Pid: pid, Bytes: n, Err: err})
	}
	return out
}

// restore gives each int3 byte of pid's executable mappings the byte its
// original holds where that is not an int3: the mapped file's, or the
// supervisor's own vDSO's (one image per kernel). Only the pages written
// since they were mapped (private copies, /proc/PID/pagemap) are read:
// the processes run on meanwhile, and hit what is not restored yet.
func restore(pid int) (int, error) {
	maps, err := proc.Maps(pid)
	if err != nil {
		return 0, err
	}
	mem, err := os.OpenFile(fmt.Sprintf("/proc/%d/mem", pid), os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer mem.Close()
	pagemap, err := os.Open(fmt.Sprintf("/proc/%d/pagemap", pid))
	if err != nil {
		return 0, err
	}
	defer pagemap.Close()
	n := 0
	var errs []error
	for _, m := range maps {
		if !m.Exec() || !(m.Path == "[vdso]" || m.Inode != 0 && strings.HasPrefix(m.Path, "/")) {
			continue // anonymous: a JIT's, or utap's own (pads, slots)
		}
		k, err := restoreMapping(pid, m, mem, pagemap)
		n += k
		if err != nil {
			errs = append(errs, fmt.Errorf("%s at %#x: %w", m.Path, m.Start, err))
		}
	}
	return n, errors.Join(errs...)
}

// restoreMapping restores mapping m's written pages.
func restoreMapping(pid int, m proc.Mapping, mem, pagemap *os.File) (int, error) {
	spans, err := written(pagemap, m.Start, m.End)
	if err != nil || len(spans) == 0 {
		return 0, err
	}
	var src io.ReaderAt
	base := int64(m.Offset) // where the mapping's first byte is in src
	if m.Path == "[vdso]" {
		start, ok, err := ownVDSO(m.End - m.Start)
		if !ok {
			return 0, err
		}
		self, err := os.Open("/proc/self/mem")
		if err != nil {
			return 0, err
		}
		defer self.Close()
		src, base = self, int64(start)
	} else {
		// The mapped file itself (map_files), even if replaced on disk since.
		f, err := os.Open(fmt.Sprintf("/proc/%d/map_files/%x-%x", pid, m.Start, m.End))
		if err != nil {
			if f, err = os.Open(m.Path); err != nil {
				return 0, err
			}
		}
		defer f.Close()
		src = f
	}
	n := 0
	for _, sp := range spans {
		orig := make([]byte, sp[1]-sp[0])
		k, err := src.ReadAt(orig, base+int64(sp[0]-m.Start))
		if err != nil && !errors.Is(err, io.EOF) {
			return n, err
		}
		// Past the file's end a mapping reads zeros: no int3 of ours.
		k, err = restoreRange(mem, sp[0], orig[:k])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// written is the spans of [start, end) whose pages are private copies
// (present and not the file's page, or swapped out): the others are
// their file's bytes.
func written(pagemap *os.File, start, end uint64) ([][2]uint64, error) {
	const page = 4096
	buf := make([]byte, 8*((end-start)/page))
	if _, err := pagemap.ReadAt(buf, int64(start/page*8)); err != nil {
		return nil, fmt.Errorf("pagemap: %w", err)
	}
	var spans [][2]uint64
	for i := 0; i < len(buf)/8; i++ {
		e := binary.LittleEndian.Uint64(buf[8*i:])
		present, swapped, file := e>>63&1 != 0, e>>62&1 != 0, e>>61&1 != 0
		if !(present && !file || swapped) {
			continue
		}
		at := start + uint64(i)*page
		if k := len(spans); k > 0 && spans[k-1][1] == at {
			spans[k-1][1] += page
		} else {
			spans = append(spans, [2]uint64{at, at + page})
		}
	}
	return spans, nil
}

// ownVDSO is where the supervisor's vDSO is, the same image as every
// process's on this kernel, if its size is size.
func ownVDSO(size uint64) (uint64, bool, error) {
	maps, err := proc.Maps(os.Getpid())
	if err != nil {
		return 0, false, err
	}
	for _, m := range maps {
		if m.Path == "[vdso]" && m.End-m.Start == size {
			return m.Start, true, nil
		}
	}
	return 0, false, nil
}

// restoreRange writes orig's bytes over the int3s of the tracer's at
// addr..: each run of bytes that differ from orig's all int3s. A pad's
// jump differs too, and keeps its bytes: a run with any other byte, or
// one a jump's rel32 may hold (within four bytes after an 0xe9), is
// left as it is.
func restoreRange(mem *os.File, addr uint64, orig []byte) (int, error) {
	cur := make([]byte, len(orig))
	if _, err := mem.ReadAt(cur, int64(addr)); err != nil {
		return 0, err
	}
	runs := int3Runs(cur, orig)
	n := 0
	for _, r := range runs {
		n += copy(cur[r[0]:r[1]], orig[r[0]:r[1]])
	}
	// A write a page (the bytes between runs are the same again): the
	// processes run on meanwhile, and hit what is not restored yet.
	for i := 0; i < len(runs); {
		j, page := i, (addr+uint64(runs[i][0]))>>12
		for j+1 < len(runs) && (addr+uint64(runs[j+1][0]))>>12 == page {
			j++
		}
		from, to := runs[i][0], runs[j][1]
		if _, err := mem.WriteAt(cur[from:to], int64(addr)+int64(from)); err != nil {
			return n, err
		}
		i = j + 1
	}
	return n, nil
}

// int3Runs is the runs [i, j) where cur differs from orig, all int3s,
// not in reach of a jump's rel32.
func int3Runs(cur, orig []byte) [][2]int {
	var runs [][2]int
	for i := 0; i < len(cur); {
		if cur[i] == orig[i] {
			i++
			continue
		}
		j, all := i, true
		for ; j < len(cur) && cur[j] != orig[j]; j++ {
			all = all && cur[j] == 0xcc
		}
		if all && bytes.IndexByte(cur[max(0, i-4):i], 0xe9) < 0 {
			runs = append(runs, [2]int{i, j})
		}
		i = j
	}
	return runs
}
