package main

import (
	"testing"

	"github.com/utap/utap/internal/fixture"
)

func TestRunBadInput(t *testing.T) {
	bin := fixture.C(t, "cli_work.c")
	oneErrorLine(t, utap(t, "run", "-e", "work(a,", "--", bin), "column")
	oneErrorLine(t, utap(t, "run", "-e", "nosuchfunc", "--", bin), "nosuchfunc")
	oneErrorLine(t, utap(t, "run", "-e", "work+0x1", "--", bin), "work")
	oneErrorLine(t, utap(t, "run", "-e", "work", "--", "/nonexistent/cmd"), "/nonexistent/cmd")
	oneErrorLine(t, utap(t, "run", "--", bin), "-e SPEC")
	oneErrorLine(t, utap(t, "run", "-e", "work", "--backend", "dtrace", "--", bin), "dtrace")
	oneErrorLine(t, utap(t, "attach", "-p", "999999", "-e", "work"), "999999")
	oneErrorLine(t, utap(t, "attach", "-p", "abc", "-e", "work"), "abc")
}
