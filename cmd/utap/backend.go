package main

import (
	"fmt"

	"github.com/utap/utap/probe"
	"github.com/utap/utap/ptrace"
	"github.com/utap/utap/uprobe"
)

// chooseEngine picks the engine for --backend and says why in one line
// (printed unless -q).
func chooseEngine(name string, sites []probe.Site) (probe.Engine, string, error) {
	switch name {
	case "ptrace":
		return &ptrace.Engine{}, "", nil
	case "uprobe":
		if err := uprobe.Available(); err != nil {
			return nil, "", fmt.Errorf("--backend uprobe: %w (or use --backend ptrace)", err)
		}
		if err := uprobe.Check(sites); err != nil {
			return nil, "", fmt.Errorf("--backend uprobe: %w", err)
		}
		return &uprobe.Engine{}, "", nil
	case "auto", "":
		if err := uprobe.Available(); err != nil {
			return &ptrace.Engine{}, fmt.Sprintf("backend ptrace: %v", err), nil
		}
		if err := uprobe.Check(sites); err != nil {
			return &ptrace.Engine{}, fmt.Sprintf("backend ptrace: %v", err), nil
		}
		return &uprobe.Engine{}, "backend uprobe (kernel uprobes; --backend ptrace for the breakpoint engine)", nil
	}
	return nil, "", fmt.Errorf("unknown --backend %q (use auto, ptrace or uprobe)", name)
}
