//go:build linux && amd64

package elfsym

import (
	"errors"

	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/probe"
)

// Sentinel errors, wrapped with the object, symbol or PID they concern and
// a hint of what to do.
var (
	ErrNotELF      = errors.New("not an ELF file")
	ErrNoSymbol    = errors.New("no such symbol")
	ErrNoProcess   = proc.ErrNoProcess
	ErrNoObject    = errors.New("no such object")
	ErrNotBoundary = errors.New("not an instruction boundary")
	ErrNoUSDT      = errors.New("no USDT probes")
)

// Target is what locations are resolved against: a running process (PID,
// whose executable and libraries come from /proc/PID/maps), or an
// executable not yet started (Exe, whose libraries come from DT_NEEDED and
// the loader's search path).
type Target struct {
	Exe string
	PID int
}

// Symbol is one probe-able location, as `utap list` shows it.
type Symbol struct {
	Object  string   `json:"object"`
	Name    string   `json:"name"`
	Kind    string   `json:"kind"`              // "func", "ifunc", "plt" or "usdt"
	Addr    uint64   `json:"addr"`              // link-time address
	Runtime uint64   `json:"runtime,omitempty"` // address in the process, when resolved against a PID
	Size    uint64   `json:"size"`
	Params  []string `json:"params,omitempty"`
	Mangled string   `json:"mangled,omitempty"` // the symbol's own name when Name is demangled
	// Go: a Go function (from pclntab), as Site.GoFunc says of a site.
	Go bool `json:"go,omitempty"`
	// USDT probes (Name is provider:name): the note's operands, and the
	// link-time address of the semaphore (0: none).
	Args      []string `json:"args,omitempty"`
	Semaphore uint64   `json:"semaphore,omitempty"`
}

// The functions below are the package's contract with the CLI and the
// engines; their bodies live in the other files of this package.
var (
	_ func([]*probe.Spec, Target) ([]probe.Site, error) = Resolve
	_ func(Target, string) ([]Symbol, error)            = List
	_ func([]proc.Mapping, string) (uint64, error)      = Bias
	_ func(string, uint64, uint64) ([]byte, error)      = Code
)
