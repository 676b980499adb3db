//go:build linux && amd64

package uprobe

import "github.com/utap/utap/probe"

// Check reports the first site this engine refuses (an instruction the
// kernel mishandles, a probe kind not supported), before anything is
// loaded, so `--backend auto` can fall back to ptrace and say why.
func Check(sites []probe.Site) error {
	if err := checkSysOverlap(sites); err != nil {
		return err
	}
	code, _ := splitSyscalls(sites)
	_, err := planAll(code, false)
	return err
}
