//go:build utapprof

package main

import (
	"os"
	"runtime/pprof"
)

func init() {
	startProfile = func() func() {
		f, err := os.Create(os.Getenv("UTAP_PROF"))
		if err != nil || pprof.StartCPUProfile(f) != nil {
			return func() {}
		}
		stopProfile = pprof.StopCPUProfile
		return pprof.StopCPUProfile
	}
}
