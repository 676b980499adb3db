//go:build linux && amd64

package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/utap/utap/probe"
)

// TestFilterSpecs: ltrace filter expressions become utap specs and
// removal rules; unsupported forms are one error naming what is not.
func TestFilterSpecs(t *testing.T) {
	for _, c := range []struct {
		expr    string
		plt     bool // --ltrace-e (true) or -x
		specs   []string
		removes []string // sym@lib of each removal rule
		err     string
	}{
		{expr: "malloc", plt: true, specs: []string{"malloc@plt"}},
		{expr: "malloc+free@libc.so*", plt: true, specs: []string{"malloc@plt", "libc:free"}},
		{expr: "malloc*@libc.so*", plt: true, specs: []string{"libc:malloc*"}},
		{expr: "malloc*@libc.so.*", specs: []string{"libc:malloc*"}},
		{expr: "str*@libc.so.6", specs: []string{"libc.so.6:str*"}},
		{expr: "@MAIN", plt: true, specs: []string{"*@plt"}},
		{expr: "@MAIN", specs: []string{"*"}},
		{expr: "*@MAIN-puts", plt: true, specs: []string{"*@plt"}, removes: []string{"puts@"}},
		{expr: "-free", plt: true, specs: []string{"*@plt"}, removes: []string{"free@"}},
		{expr: "str*@libc-strlen@libc", plt: true, specs: []string{"libc:str*"}, removes: []string{"strlen@libc"}},
		{expr: "@libm.so*", specs: []string{"libm:*"}},
		{expr: "foo*", specs: []string{"foo*"}},
		{expr: "handle@/opt/app/libplug.so", specs: []string{"/opt/app/libplug.so:handle"}},
		{expr: "a+b+c", specs: []string{"a", "b", "c"}},
		{expr: "!malloc", err: "negation (!) is not supported"},
		{expr: "/mal.*/", err: "regular expressions"},
		{expr: "malloc@/lib.*/", err: "regular expressions"},
		{expr: "^malloc", err: "anchors"},
		{expr: "malloc@lib*", err: `library pattern "lib*"`},
		{expr: "malloc@/lib/*.so", err: "globs in paths"},
		{expr: "malloc@", err: "no library after @"},
		{expr: "", err: "empty"},
		{expr: "*", err: "every function of the executable"},
		{expr: "malloc-malloc@x@y", err: "two @"},
		{expr: "m[", err: "bad pattern"},
	} {
		specs, removes, err := filterSpecs(c.expr, c.plt)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want one containing %q", c.expr, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.expr, err)
			continue
		}
		var rm []string
		for _, r := range removes {
			rm = append(rm, r.sym+"@"+r.lib)
		}
		if !slices.Equal(specs, c.specs) || !slices.Equal(rm, c.removes) {
			t.Errorf("%q (plt %v): specs %q removes %q, want %q %q", c.expr, c.plt, specs, rm, c.specs, c.removes)
		}
		for _, s := range specs {
			if _, err := probe.Parse(s); err != nil {
				t.Errorf("%q: spec %q does not parse: %v", c.expr, s, err)
			}
		}
	}
}

// TestFilterRemoves: a removal rule drops sites by function name (a PLT
// stub by its function's) and by the object that defines it.
func TestFilterRemoves(t *testing.T) {
	exe := "/opt/app/bin/app"
	libc := "/usr/lib/x86_64-linux-gnu/libc.so.6"
	for _, c := range []struct {
		rule filterRule
		site probe.Site
		want bool
	}{
		{filterRule{sym: "free"}, probe.Site{Object: exe, Func: "free@plt"}, true},
		{filterRule{sym: "free"}, probe.Site{Object: libc, Func: "free"}, true},
		{filterRule{sym: "fre"}, probe.Site{Object: libc, Func: "free"}, false},
		{filterRule{sym: "str*", lib: "libc.so*"}, probe.Site{Object: libc, Func: "strlen"}, true},
		{filterRule{sym: "str*", lib: "libc"}, probe.Site{Object: libc, Func: "strlen"}, true},
		{filterRule{sym: "str*", lib: "libc"}, probe.Site{Object: exe, Func: "strlen@plt"}, false},
		{filterRule{sym: "*", lib: "MAIN"}, probe.Site{Object: exe, Func: "work"}, true},
		{filterRule{sym: "*", lib: "MAIN"}, probe.Site{Object: libc, Func: "work"}, false},
		{filterRule{sym: "*", lib: libc}, probe.Site{Object: libc, Func: "puts"}, true},
	} {
		if got := c.rule.removes(c.site, exe); got != c.want {
			t.Errorf("rule %+v on %s in %s: %v, want %v", c.rule, c.site.Func, c.site.Object, got, c.want)
		}
	}
}
