package probe

import (
	"errors"
	"reflect"
	"testing"
)

func TestBind(t *testing.T) {
	spec, err := Parse("work(a, b:x, str(c), arg1) if a*2 + b > 10 && pid != 0")
	if err != nil {
		t.Fatal(err)
	}
	before := spec.String()
	site := Site{Spec: spec, Func: "work", Params: []string{"a", "b", "c"}}
	if err := site.Bind(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range site.Fetches {
		got = append(got, f.String())
	}
	want := []string{"arg1", "arg2:x", "str(arg3)", "arg1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("bound fetches = %q, want %q", got, want)
	}
	if c := site.Cond.String(); c != "((((arg1 * 2) + arg2) > 10) && (pid != 0))" {
		t.Errorf("bound cond = %s", c)
	}
	if site.Fetches[1].Text != "b:x" {
		t.Errorf("bound fetch Text = %q, want the spec's", site.Fetches[1].Text)
	}
	if after := spec.String(); after != before {
		t.Errorf("Bind mutated the spec: %s became %s", before, after)
	}
	// Subtrees without names are shared, not copied.
	if site.Fetches[3].Expr != spec.Fetches[3].Expr {
		t.Error("Bind copied a name-free fetch")
	}
	if site.Cond.(*Binary).Y != spec.Cond.(*Binary).Y {
		t.Error("Bind copied a name-free subtree")
	}

	// A second site with other parameter positions binds independently.
	other := Site{Spec: spec, Func: "work2", Params: []string{"c", "b", "a"}}
	if err := other.Bind(); err != nil {
		t.Fatal(err)
	}
	if f := other.Fetches[0].String(); f != "arg3" {
		t.Errorf("second site's a = %s, want arg3", f)
	}
	if f := site.Fetches[0].String(); f != "arg1" {
		t.Errorf("first site's a changed to %s", f)
	}
}

func TestBindNoNames(t *testing.T) {
	spec, err := Parse("work(arg2)")
	if err != nil {
		t.Fatal(err)
	}
	site := Site{Spec: spec}
	if err := site.Bind(); err != nil {
		t.Fatal(err)
	}
	if site.Cond != nil || len(site.Fetches) != 1 || site.Fetches[0].Expr != spec.Fetches[0].Expr {
		t.Errorf("bound = %v %v", site.Fetches, site.Cond)
	}
	site.Fetches[0].Format = FormatHex
	if spec.Fetches[0].Format != FormatDefault {
		t.Error("site's fetches alias the spec's")
	}
}

func TestBindUnknown(t *testing.T) {
	spec, err := Parse("work(a) if foo > 1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		site Site
		want string
	}{
		{Site{Spec: spec, Func: "work", Params: []string{"a", "b"}},
			`spec "work(a) if foo > 1": "foo" is not a parameter of work (parameters: a, b); use arg1..arg6`},
		{Site{Spec: spec, Addr: 0x401136, ABI: ABIGoRegs},
			`spec "work(a) if foo > 1": "a" is not a parameter of 0x401136 (parameters: none known: no DWARF information); use arg1..arg9`},
	} {
		err := tt.site.Bind()
		if err == nil || err.Error() != tt.want || !errors.Is(err, ErrNoParam) {
			t.Errorf("Bind() = %v, want %s", err, tt.want)
		}
		if tt.site.Fetches != nil || tt.site.Cond != nil {
			t.Error("failed Bind filled the site")
		}
	}
}
