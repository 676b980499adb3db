//go:build utapprof

package main

import (
	"os"
	"runtime/pprof"
)

func init() {
	startProfile = func() {
		if f, err := os.Create(os.Getenv("UTAP_PROF")); err == nil && pprof.StartCPUProfile(f) == nil {
			stopProfile = pprof.StopCPUProfile
		}
	}
}
