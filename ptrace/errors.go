//go:build linux && amd64

package ptrace

import (
	"errors"

	"github.com/utap/utap/internal/proc"
)

// Sentinel errors, wrapped with the PID, site or instruction concerned.
var (
	ErrNoProcess  = proc.ErrNoProcess
	ErrPermission = proc.ErrPermission
	ErrRefused    = errors.New("cannot probe this instruction")
)
