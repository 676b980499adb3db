//go:build linux && amd64

package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"
	"github.com/utap/utap/internal/output"
	"github.com/utap/utap/probe"
)

// -ff (strace): with -o FILE, each task's lines go to FILE.TID, without
// the [pid N] prefix; it follows forks, as -f.
var ffFlag = &cli.BoolFlag{Name: "ff", Usage: "with -o FILE, write each process's (each thread's) lines to FILE.PID, following forks (strace -ff)"}

// perTask is the Writer of -ff: a writer of the format per task, made at
// its first event.
type perTask struct {
	base, format string
	opts         output.Options
	tasks        map[int]*taskOut
}

type taskOut struct {
	f *os.File
	w output.Writer
}

func newPerTask(base, format string, opts output.Options) (*perTask, error) {
	if base == "" || base == "-" {
		return nil, fmt.Errorf("-ff writes FILE.PID for each process: give -o FILE")
	}
	opts.StracePIDs = false // the file names the task
	return &perTask{base: base, format: format, opts: opts, tasks: map[int]*taskOut{}}, nil
}

func (p *perTask) Write(ev *probe.Event) error {
	tid := ev.TID
	if tid == 0 {
		tid = ev.PID
	}
	t := p.tasks[tid]
	if t == nil {
		f, err := os.OpenFile(fmt.Sprintf("%s.%d", p.base, tid), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
		if err != nil {
			return fmt.Errorf("-ff: %w", err)
		}
		w, err := output.New(p.format, f, p.opts)
		if err != nil {
			f.Close()
			return err
		}
		t = &taskOut{f, w}
		p.tasks[tid] = t
	}
	return t.w.Write(ev)
}

func (p *perTask) Flush() error {
	var first error
	for _, t := range p.tasks {
		if err := t.w.Flush(); first == nil {
			first = err
		}
	}
	return first
}

// End ends every file's output and closes it.
func (p *perTask) End() error {
	var first error
	for _, t := range p.tasks {
		err := output.End(t.w)
		if cerr := t.f.Close(); err == nil {
			err = cerr
		}
		if first == nil {
			first = err
		}
	}
	return first
}
