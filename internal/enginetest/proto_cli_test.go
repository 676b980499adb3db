package enginetest

import (
	"regexp"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
)

// TestCLIPrototypeCalls: without fetches, calls show as ltrace shows them,
// one line per call with typed arguments and return value, the same on
// both engines; -c counts a 32-bit -1 and a NULL pointer as errors.
func TestCLIPrototypeCalls(t *testing.T) {
	bin := fixture.C(t, "proto_types.c")
	want := []*regexp.Regexp{
		regexp.MustCompile(`(?m)^p_int\(-1, 2, -3\) = -2$`),
		regexp.MustCompile(`(?m)^p_str\("abc", "de"\) = 5$`),
		regexp.MustCompile(`(?m)^p_bool\(true, BLUE\) = true$`),
		regexp.MustCompile(`(?m)^p_neg\(1\) = -1$`),
		regexp.MustCompile(`(?m)^p_ptr\(0x[0-9a-f]+\) = 0x[0-9a-f]+$`),
		regexp.MustCompile(`(?m)^p_ptr\(0x[0-9a-f]+\) = NULL$`),
		regexp.MustCompile(`(?m)^open\("/nope", 0\) = -1$`),
		regexp.MustCompile(`(?m)^malloc\(24\) = 0x[0-9a-f]+$`),
	}
	specs := []string{"-e", "p_*", "-e", "libc:open", "-e", "libc:malloc"}
	var outs []string
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			r := utap(t, append(append([]string{"run", "-q", "--backend", b.name}, specs...), "--", bin)...)
			got := pidRE.ReplaceAllString(r.stderr, "")
			got = strings.ReplaceAll(got, "\n ", "\n")
			got = regexp.MustCompile(`(?m)^ `).ReplaceAllString(got, "")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			for _, re := range want {
				if !re.MatchString(got) {
					t.Errorf("no line matching %s in\n%s", re, got)
				}
			}
			outs = append(outs, regexp.MustCompile(`0x[0-9a-f]+`).ReplaceAllString(got, "0x"))

			r = utap(t, append(append([]string{"run", "-q", "-c", "--backend", b.name}, specs...), "--", bin)...)
			for _, row := range []string{`\b1\s+1\s.*\bopen$`, `\b1\s+1\s.*\bp_neg$`, `\b2\s+1\s.*\bp_ptr$`} {
				if !regexp.MustCompile(`(?m)` + row).MatchString(r.stderr) {
					t.Errorf("-c: no row %s in\n%s", row, r.stderr)
				}
			}
		})
	}
	if len(outs) == 2 && outs[0] != outs[1] {
		t.Errorf("engines differ:\n%s\n---\n%s", outs[0], outs[1])
	}
}
