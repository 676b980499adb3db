package pads

import (
	"testing"

	"github.com/utap/utap/probe"
)

// TestSysSiteID: the system call pads of one call for one probe share a
// record site, whatever image they are in; another call or probe has its
// own, and function sites still number on after them.
func TestSysSiteID(t *testing.T) {
	d := New(func(*probe.Event) {}, false)
	all, other := &probe.Site{Func: "syscall"}, &probe.Site{Func: "read"}
	made := 0
	id := func(s *probe.Site, nr int) uint32 {
		return d.SysSiteID(s, nr, func() *Site { made++; return &Site{Func: s.Func} })
	}
	read := id(all, 0)
	for range 500 { // a libc's pads, image after image
		if id(all, 0) != read {
			t.Fatal("a second id for read's pads")
		}
		d.SysPad(0x7f00_0000_1000, read)
	}
	write, otherRead := id(all, 1), id(other, 0)
	if write == read || otherRead == read || otherRead == write || made != 3 {
		t.Errorf("ids read %d write %d other probe's read %d, sites made %d: want three of each", read, write, otherRead, made)
	}
	if next := d.NextID(); next != 3 {
		t.Errorf("next function site %d, want 3", next)
	}
}
