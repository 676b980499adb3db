//go:build linux && amd64

package syscalls

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
)

// Errors of Select, wrapped with the details.
var (
	ErrUnknown      = errors.New("unknown system call")
	ErrUnknownClass = errors.New("unknown system call class")
)

// Select returns the calls a -e trace= element names: a call name, a
// glob (open*, *stat*, *), or a class (%file, %%stat, ...), by number; a
// comma-separated list of those, or ! before one (or before a list:
// every call but those), as strace takes them.
func Select(pattern string) ([]*Info, error) {
	if rest, ok := strings.CutPrefix(pattern, "!"); ok {
		// strace's !: every call but these.
		not, err := Select(rest)
		if err != nil {
			return nil, err
		}
		skip := map[*Info]bool{}
		for _, in := range not {
			skip[in] = true
		}
		var out []*Info
		for _, in := range infos {
			if !skip[in] {
				out = append(out, in)
			}
		}
		return out, nil
	}
	if strings.Contains(pattern, ",") {
		// A list, as strace's trace=a,b: the calls any element names.
		seen := map[*Info]bool{}
		for _, p := range strings.Split(pattern, ",") {
			ins, err := Select(p)
			if err != nil {
				return nil, err
			}
			for _, in := range ins {
				seen[in] = true
			}
		}
		var out []*Info
		for _, in := range infos {
			if seen[in] {
				out = append(out, in)
			}
		}
		return out, nil
	}
	if strings.HasPrefix(pattern, "%") {
		for _, cn := range classNames {
			if cn.name == pattern {
				var out []*Info
				for _, in := range infos {
					if in.Classes&cn.c != 0 {
						out = append(out, in)
					}
				}
				return out, nil
			}
		}
		names := make([]string, len(classNames))
		for i, cn := range classNames {
			names[i] = cn.name
		}
		return nil, fmt.Errorf("%w %q (classes: %s)", ErrUnknownClass, pattern, strings.Join(names, " "))
	}
	if strings.ContainsAny(pattern, "*?[") {
		if _, err := path.Match(pattern, ""); err != nil {
			return nil, fmt.Errorf("%w: bad pattern %q: %v", ErrUnknown, pattern, err)
		}
		var out []*Info
		for _, in := range infos {
			if ok, _ := path.Match(pattern, in.Name); ok {
				out = append(out, in)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("%w: no system call matches %q", ErrUnknown, pattern)
		}
		return out, nil
	}
	if in := byName[pattern]; in != nil {
		return []*Info{in}, nil
	}
	if near := nearest(pattern); len(near) > 0 {
		return nil, fmt.Errorf("%w %q (did you mean %s?)", ErrUnknown, pattern, strings.Join(near, ", "))
	}
	return nil, fmt.Errorf("%w %q", ErrUnknown, pattern)
}

// nearest returns the names within edit distance 3 of s and at most one
// more than the closest, closest first (ties by name), at most 3.
func nearest(s string) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, in := range infos {
		if d := editDistance(s, in.Name); d <= 3 {
			cs = append(cs, cand{in.Name, d})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for i := 0; i < len(cs) && i < 3 && cs[i].d <= cs[0].d+1; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// editDistance is the Levenshtein distance.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
