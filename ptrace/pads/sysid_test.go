package pads

import (
	"testing"

	"github.com/utap/utap/probe"
)

// TestSiteIDs: a key's sites are made once, whatever image asks again;
// another key's come after them, an entry's and its return's in a row.
func TestSiteIDs(t *testing.T) {
	d := New(func(*probe.Event) {}, false)
	made := 0
	ids := func(key string, n int) uint32 {
		return d.SiteIDs(key, func() []*Site {
			made++
			s := make([]*Site, n)
			for i := range s {
				s[i] = &Site{Func: key, Return: i == 1}
			}
			return s
		})
	}
	read := ids("read", 1)
	for range 500 { // a libc's pads, image after image
		if ids("read", 1) != read {
			t.Fatal("a second id for read's pads")
		}
	}
	work, write := ids("work", 2), ids("write", 1)
	if read != 0 || work != 1 || write != 3 || made != 3 {
		t.Errorf("ids read %d, work %d (and its return), write %d; sites made %d times: want 0, 1, 3, 3", read, work, write, made)
	}
	if s := d.sites[work+1]; s.Func != "work" || !s.Return {
		t.Errorf("site %d: %+v, want work's return", work+1, s)
	}
}
