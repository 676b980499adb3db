//go:build linux && amd64

package main

import (
	"fmt"

	"github.com/utap/utap/probe"
	"github.com/utap/utap/ptrace"
	"github.com/utap/utap/uprobe"
)

// backends are the engines, in auto's order of preference: the kernel's
// uprobes when the machine and the sites allow, else the breakpoint engine.
var backends = []probe.Backend{uprobe.Backend, ptrace.Backend}

// chooseBackend picks the engine for --backend and says why in one line
// (printed unless -q).
func chooseBackend(name string, sites []probe.Site) (probe.Backend, string, error) {
	if name == "auto" || name == "" {
		first, second := backends[0], backends[1]
		if err := available(first); err != nil {
			return second, fmt.Sprintf("backend %s: %v", second.Name, err), nil
		}
		if err := check(first, sites); err != nil {
			return second, fmt.Sprintf("backend %s: %v", second.Name, err), nil
		}
		return first, "backend uprobe (kernel uprobes; --backend ptrace for the breakpoint engine)", nil
	}
	for _, b := range backends {
		if b.Name != name {
			continue
		}
		if err := available(b); err != nil {
			return b, "", fmt.Errorf("--backend %s: %w (or use --backend ptrace)", name, err)
		}
		if err := check(b, sites); err != nil {
			return b, "", fmt.Errorf("--backend %s: %w", name, err)
		}
		return b, "", nil
	}
	return probe.Backend{}, "", fmt.Errorf("unknown --backend %q (use auto, ptrace or uprobe)", name)
}

func available(b probe.Backend) error {
	if b.Available == nil {
		return nil
	}
	return b.Available()
}

func check(b probe.Backend, sites []probe.Site) error {
	if b.Check == nil {
		return nil
	}
	return b.Check(sites)
}
