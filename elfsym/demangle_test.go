//go:build linux && amd64

package elfsym

import (
	"slices"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/probe"
)

func TestDemangled(t *testing.T) {
	for in, want := range map[string]string{
		"_ZN3app6Server6handleEl":     "app::Server::handle",
		"_ZN3app6Server6handleEl@plt": "app::Server::handle@plt",
		"_ZN3app5twiceIlEET_S1_":      "app::twice<long>",
		"malloc":                      "",
		"_Znot_mangled_at_all":        "",
	} {
		if got := demangled(in); got != want {
			t.Errorf("demangled(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestResolveCxx: a C++ method resolves by its source name (both
// overloads, named so in events, with DWARF parameter names) and by its
// mangled name; listings show the source name and keep the mangled one.
func TestResolveCxx(t *testing.T) {
	bin := fixture.C(t, "et_cxx.cc", "-O1", "-g")
	sites, err := Resolve([]*probe.Spec{spec("app::Server::handle")}, Target{Exe: bin})
	if err != nil {
		t.Fatal(err)
	}
	if len(sites) != 2 {
		t.Fatalf("%d sites, want the 2 overloads: %+v", len(sites), sites)
	}
	for _, s := range sites {
		if s.Func != "app::Server::handle" || len(s.Params) < 2 || s.Params[0] != "this" || s.Params[1] != "x" {
			t.Errorf("site %s params %q", s.Func, s.Params)
		}
	}
	one := resolveOne(t, Target{Exe: bin}, "_ZN3app6Server6handleEll")
	if one.Func != "app::Server::handle" || !slices.Equal(one.Params, []string{"this", "x", "y"}) {
		t.Errorf("by the mangled name: %s %q", one.Func, one.Params)
	}
	syms, err := List(Target{Exe: bin}, "app::twice*")
	if err != nil || len(syms) != 1 || syms[0].Name != "app::twice<long>" || syms[0].Mangled != "_ZN3app5twiceIlEET_S1_" {
		t.Errorf("List: %+v, %v", syms, err)
	}
}
