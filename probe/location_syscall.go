package probe

import "strings"

// syscallLocation scans the rest of "syscall:PATTERN" (comps, after
// "syscall") into s. The pattern (a name, a glob or a strace %class) is
// checked against the system call table by whoever makes the sites: the
// grammar knows no system calls.
func (p *parser) syscallLocation(s *Spec, comps []comp, loc string) {
	if len(comps) != 1 {
		p.fail(comps[1].pos-1, ":", "bad system call probe %q: want syscall:NAME, syscall:GLOB or syscall:%%CLASS", loc)
	}
	c := comps[0]
	if c.s == "" {
		p.fail(c.pos, "", "missing system call name in %q: want syscall:NAME (openat, open*, %%file)", loc)
	}
	if base, ok := strings.CutSuffix(c.s, "%return"); ok && base != "" {
		p.fail(c.pos+len(base), "%return", "a system call probe fires once per call, when it returns: drop %%return")
	}
	for i := 0; i < len(c.s); i++ {
		if ch := c.s[i]; !isAlnum(ch) && strings.IndexByte("_*?[]!^-%,", ch) < 0 {
			p.fail(c.pos+i, c.s[i:i+1], "unexpected %q in system call name %q", c.s[i:i+1], c.s)
		}
	}
	s.Syscall, s.Symbol, s.Kind = true, c.s, Return
}
