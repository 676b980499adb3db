//go:build linux && amd64

package elfsym

import (
	"errors"
	"strings"

	"github.com/utap/utap/probe"
)

// listScope splits a list pattern into the objects to list and the glob
// to match in them. "OBJECT:GLOB" names one object, unless OBJECT is no
// object of the target: then the whole pattern may be a USDT
// provider:name glob ("python:*"). "usdt:" first lists static probes only.
func (ld *loader) listScope(pattern string) (paths []string, glob string, usdtOnly bool, err error) {
	paths, glob = ld.objects(), pattern
	if rest, ok := strings.CutPrefix(pattern, "usdt:"); ok {
		usdtOnly, glob = true, rest
		if parts := strings.Split(rest, ":"); len(parts) == 3 {
			o, err := ld.objectFor(&probe.Spec{Text: pattern, Object: parts[0]})
			if err != nil {
				return nil, "", false, err
			}
			return []string{o.path}, parts[1] + ":" + parts[2], true, nil
		}
		return paths, glob, true, nil
	}
	obj, rest, ok := probe.CutObject(pattern)
	if !ok {
		return paths, glob, false, nil
	}
	o, err := ld.objectFor(&probe.Spec{Text: pattern, Object: obj})
	if err != nil {
		if errors.Is(err, ErrNoObject) && !strings.Contains(obj, "/") && strings.Count(pattern, ":") == 1 {
			// Not an object: perhaps provider:name.
			return paths, pattern, true, nil
		}
		return nil, "", false, err
	}
	return []string{o.path}, rest, false, nil
}

// listUSDT appends the object's static probes matching pattern (by
// provider:name, or by name alone) to out.
func (o *object) listUSDT(out []Symbol, pattern string) ([]Symbol, error) {
	probes, err := o.usdtProbes()
	if err != nil {
		return nil, err
	}
	for i := range probes {
		p := &probes[i]
		if pattern != "" && !matchName(pattern, p.fullName()) && !matchName(pattern, p.Name) {
			continue
		}
		out = append(out, Symbol{Object: o.path, Name: p.fullName(), Kind: "usdt", Addr: p.PC,
			Args: p.operands, Semaphore: p.Semaphore})
	}
	return out, nil
}
