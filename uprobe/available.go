//go:build linux && amd64

package uprobe

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/features"
	"golang.org/x/sys/unix"
)

// ErrUnavailable says this process or kernel cannot use kernel uprobes.
var ErrUnavailable = errors.New("kernel uprobes unavailable")

const uprobePMU = "/sys/bus/event_source/devices/uprobe/type"

// Available says precisely why the uprobe engine cannot run here, or nil.
// The CLI's --backend auto falls back to ptrace and prints the reason.
func Available() error {
	if os.Geteuid() != 0 {
		if err := haveCaps(); err != nil {
			return err
		}
	}
	if _, err := os.Stat(uprobePMU); err != nil {
		return fmt.Errorf("%w: the kernel has no uprobe PMU (%s missing; needs CONFIG_UPROBE_EVENTS)", ErrUnavailable, uprobePMU)
	}
	if err := features.HaveMapType(ebpf.RingBuf); err != nil {
		return fmt.Errorf("%w: no BPF ring buffer (Linux 5.8+): %v", ErrUnavailable, err)
	}
	if err := features.HaveProgramHelper(ebpf.Kprobe, asm.FnGetAttachCookie); err != nil {
		return fmt.Errorf("%w: no bpf_get_attach_cookie (Linux 5.15+): %v", ErrUnavailable, err)
	}
	return nil
}

// haveCaps checks the effective capabilities a non-root tracer needs:
// CAP_BPF and CAP_PERFMON to load, CAP_SYS_ADMIN to create a uprobe
// through perf (kernel commit ba677dbe).
func haveCaps() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("%w: reading capabilities: %v", ErrUnavailable, err)
	}
	var missing []string
	for _, c := range []struct {
		bit  uint
		name string
	}{{unix.CAP_BPF, "CAP_BPF"}, {unix.CAP_PERFMON, "CAP_PERFMON"}, {unix.CAP_SYS_ADMIN, "CAP_SYS_ADMIN"}} {
		if data[c.bit/32].Effective&(1<<(c.bit%32)) == 0 {
			missing = append(missing, c.name)
		}
	}
	if len(missing) > 0 {
		if b, err := os.ReadFile("/proc/sys/kernel/unprivileged_bpf_disabled"); err == nil && missing[0] == "CAP_BPF" {
			if v := strings.TrimSpace(string(b)); v != "0" {
				missing = append(missing, "and BPF is disabled without it (kernel.unprivileged_bpf_disabled="+v+")")
			}
		}
		return fmt.Errorf("%w: not root and missing %s (run as root or grant CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN)",
			ErrUnavailable, strings.Join(missing, ", "))
	}
	return nil
}
