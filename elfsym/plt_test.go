//go:build linux && amd64

package elfsym

import (
	"testing"

	"github.com/utap/utap/internal/fixture"
)

// TestPLTMatchesObjdump compares the PLT stubs found with objdump's
// labels for every layout gcc and ld produce here: lazy .plt with 16-byte
// entries, IBT .plt.sec, BIND_NOW, .plt.got, non-PIE and static.
func TestPLTMatchesObjdump(t *testing.T) {
	for name, flags := range map[string][]string{
		"lazy":    {"-O1", "-g"},
		"ibt":     {"-O1", "-g", "-fcf-protection=full", "-Wl,-z,ibtplt"},
		"now":     {"-O1", "-g", "-Wl,-z,now"},
		"nopie":   {"-O1", "-g", "-no-pie"},
		"static":  {"-O1", "-g", "-static"},
		"ibt-now": {"-O1", "-g", "-fcf-protection=full", "-Wl,-z,ibtplt", "-Wl,-z,now"},
	} {
		t.Run(name, func(t *testing.T) {
			bin := fixture.C(t, "elf_target.c", flags...)
			want := objdumpPLT(t, bin)
			syms, err := List(Target{Exe: bin}, bin+":*@plt")
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]uint64{}
			for _, s := range syms {
				if s.Kind != "plt" || s.Object != bin {
					t.Errorf("%+v", s)
				}
				got[s.Name] = s.Addr
			}
			for n, a := range want {
				if got[n] != a {
					t.Errorf("%s: objdump %#x, elfsym %#x", n, a, got[n])
				}
			}
			for n, a := range got {
				if _, ok := want[n]; !ok {
					t.Errorf("%s at %#x: not in objdump", n, a)
				}
			}
			if name != "static" && len(want) < 5 {
				t.Errorf("objdump shows only %d stubs", len(want))
			}
			// A stub resolves as a site like any function.
			for n := range want {
				s := resolveOne(t, Target{Exe: bin}, n)
				checkSiteBytes(t, s)
				break
			}
		})
	}
}
