//go:build linux && amd64

package elfsym

import (
	"errors"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/probe"
)

// TestResolveOverloadParams: a spec naming a parameter binds each C++
// overload by its own names; the overloads without it are skipped with a
// notice, and only a name no overload has is an error.
func TestResolveOverloadParams(t *testing.T) {
	bin := fixture.C(t, "et_cxx.cc", "-O1", "-g")
	sites, notes, err := ResolveNotes([]*probe.Spec{parsed(t, "app::Server::handle(y)")}, Target{Exe: bin})
	if err != nil {
		t.Fatal(err)
	}
	if len(sites) != 1 || len(sites[0].Params) != 3 || sites[0].Params[2] != "y" {
		t.Fatalf("sites %+v, want the (x, y) overload only", sites)
	}
	if a, ok := sites[0].Fetches[0].Expr.(*probe.Arg); !ok || a.N != 3 {
		t.Errorf("y bound to %v, want arg3 (after this and x)", sites[0].Fetches[0].Expr)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "1 of 2 functions skipped") || !strings.Contains(notes[0], "app::Server::handle(this, x)") {
		t.Errorf("notes %q", notes)
	}
	// x: both have it, each binds it.
	sites, notes, err = ResolveNotes([]*probe.Spec{parsed(t, "app::Server::handle(x)")}, Target{Exe: bin})
	if err != nil || len(sites) != 2 || len(notes) != 0 {
		t.Errorf("x: %d sites, notes %q, %v; want 2, none", len(sites), notes, err)
	}
	_, _, err = ResolveNotes([]*probe.Spec{parsed(t, "app::Server::handle(z)")}, Target{Exe: bin})
	if !errors.Is(err, probe.ErrNoParam) || !strings.Contains(err.Error(), "none of its 2 functions") {
		t.Errorf("z: %v, want ErrNoParam for all 2", err)
	}
}

func parsed(t *testing.T, text string) *probe.Spec {
	t.Helper()
	s, err := probe.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
