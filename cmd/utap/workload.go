//go:build linux && amd64

package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"

	"github.com/utap/utap/compare"
)

// The hidden workload mode, `utap __workload --calls N --threads T
// [--mode call|syscall]`, is what `utap compare` traces on a machine
// without a C compiler. It is caught in init, before the CLI parses
// anything, so its start-up is short and no CLI code runs in it.
func init() {
	if len(os.Args) > 1 && os.Args[1] == "__workload" {
		os.Exit(workload(os.Args[2:]))
	}
}

// utapWorkloadTarget is the probed function: a real call (noinline) with
// deterministic arguments, so conditions on b are always true or false.
//
//go:noinline
func utapWorkloadTarget(a, b int) int { return a*2 + b }

func workload(args []string) int {
	fs := flag.NewFlagSet("__workload", flag.ContinueOnError)
	calls := fs.Int("calls", 1000, "calls of the target, over all threads")
	threads := fs.Int("threads", 1, "OS threads calling")
	mode := fs.String("mode", "call", "call (the target), syscall (getppid) or syscallmix (getppid and 100 getuid)")
	if err := fs.Parse(args); err != nil || *threads < 1 || *mode != "call" && *mode != "syscall" && *mode != "syscallmix" && *mode != "syscallother" {
		fmt.Fprintln(os.Stderr, "usage: utap __workload --calls N --threads T [--mode call|syscall|syscallmix]")
		return 2
	}
	sums := make([]int, *threads)
	var wg sync.WaitGroup
	for i := range *threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One OS thread each, as the C workload's pthreads.
			runtime.LockOSThread()
			s := 0
			for j := i; j < *calls; j += *threads {
				if *mode == "syscallother" {
					if syscall.Getuid() != -1 {
						s++ // the probed getppid never comes
					}
				} else if *mode != "call" {
					if syscall.Getppid() > 0 {
						s++
					}
					for k := 0; *mode == "syscallmix" && k < compare.MixUntraced; k++ {
						if syscall.Getuid() == -1 {
							s++ // never: the sum stays calls
						}
					}
				} else {
					s += utapWorkloadTarget(j, 7)
				}
			}
			sums[i] = s
		}()
	}
	wg.Wait()
	total := 0
	for _, s := range sums {
		total += s
	}
	fmt.Println(total)
	return 0
}
