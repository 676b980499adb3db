package profile

import (
	"bufio"
	"io"
	"slices"
	"strconv"
	"strings"
)

// folded is each stack as its frame names, outermost first, joined by
// ';', with its total: stacks with different addresses but the same names
// are one line. Lines are sorted, as flamegraph.pl and stackcollapse
// write them, so the output is the same from run to run.
func (s *Stacks) folded(v Value) (lines []string, totals map[string]int64) {
	totals = map[string]int64{}
	var b strings.Builder
	for _, sm := range s.samples {
		n := sm.value(v)
		if n == 0 {
			continue
		}
		b.Reset()
		for i := len(sm.frames) - 1; i >= 0; i-- {
			b.WriteString(FrameName(&sm.frames[i]))
			if i > 0 {
				b.WriteByte(';')
			}
		}
		k := b.String()
		if _, ok := totals[k]; !ok {
			lines = append(lines, k)
		}
		totals[k] += n
	}
	slices.Sort(lines)
	return lines, totals
}

// WriteFolded writes flamegraph.pl's input: a line per stack, frames
// outermost first separated by ';', a space and the stack's value.
func (s *Stacks) WriteFolded(w io.Writer, v Value) error {
	bw := bufio.NewWriter(w)
	lines, totals := s.folded(v)
	for _, l := range lines {
		bw.WriteString(l)
		bw.WriteByte(' ')
		bw.WriteString(strconv.FormatInt(totals[l], 10))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
