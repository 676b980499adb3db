package probe

import "strings"

// usdtLocation scans the rest of "usdt:[object:]provider:name" (comps,
// after "usdt") into s: Provider, Symbol (the probe's name) and Object.
// Both names may be globs. A static probe fires where the program put
// it, so it takes no offset and has no return.
func (p *parser) usdtLocation(s *Spec, comps []comp, loc string) {
	switch len(comps) {
	case 2:
	case 3:
		if comps[0].s == "" {
			p.fail(comps[0].pos, ":", "empty object name before ':'")
		}
		s.Object = comps[0].s
		comps = comps[1:]
	default:
		at := comps[len(comps)-1]
		if len(comps) > 3 {
			at = comps[3]
		}
		p.fail(at.pos, at.s, "bad USDT location %q: want usdt:[object:]provider:name (paths containing ':' are not supported)", loc)
	}
	for i, c := range comps {
		what := [2]string{"provider", "probe name"}[i]
		if c.s == "" {
			p.fail(c.pos, "", "missing USDT %s in %q: want usdt:[object:]provider:name", what, loc)
		}
		if base, ok := strings.CutSuffix(c.s, "%return"); ok && i == 1 {
			p.fail(c.pos+len(base), "%return", "a USDT probe has no return: it fires where the program placed it")
		}
		if j := badUSDTChar(c.s); j >= 0 {
			p.fail(c.pos+j, c.s[j:j+1], "unexpected %q in USDT %s %q", c.s[j:j+1], what, c.s)
		}
	}
	s.Provider, s.Symbol = comps[0].s, comps[1].s
}

// badUSDTChar returns the index of the first character that cannot be
// part of a provider or probe name (C identifiers) or a glob of one, or -1.
func badUSDTChar(name string) int {
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isAlnum(c) && strings.IndexByte("_*?[]!^-", c) < 0 {
			return i
		}
	}
	return -1
}
