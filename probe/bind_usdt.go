package probe

import (
	"fmt"
	"strconv"
	"strings"
)

// usdtArg is the expression of a USDT site's n-th operand.
func (s *Site) usdtArg(n int) (Expr, error) {
	if n < 1 || n > len(s.Args) {
		return nil, &noParamError{fmt.Sprintf("no arg%d: %s", n, s.argCount())}
	}
	if e := s.Args[n-1]; e != nil {
		return e, nil
	}
	why := "unsupported form"
	if n <= len(s.ArgErrs) && s.ArgErrs[n-1] != nil {
		why = s.ArgErrs[n-1].Error()
	}
	return nil, &noParamError{fmt.Sprintf("arg%d of %s cannot be read: %s", n, s.where(), why)}
}

// argCount says how many arguments a USDT site has, and what they are:
// "python:gc__start has 1 argument (-4@112(%rsp))".
func (s *Site) argCount() string {
	ops := ""
	if len(s.Operands) > 0 {
		ops = " (" + strings.Join(s.Operands, " ") + ")"
	}
	switch len(s.Args) {
	case 0:
		return s.where() + " has no arguments"
	case 1:
		return s.where() + " has 1 argument" + ops
	}
	return fmt.Sprintf("%s has %d arguments%s", s.where(), len(s.Args), ops)
}

// allArgs is what a USDT spec without fetches reports: every operand the
// site has, as arg1..argN (Text), at its own type. Operands utap cannot
// read are left out rather than failing the probe: a glob over a
// provider's probes should not stop at one odd operand.
func (s *Site) allArgs() []Fetch {
	var fs []Fetch
	for i, e := range s.Args {
		if e != nil {
			fs = append(fs, Fetch{Expr: e, Text: "arg" + strconv.Itoa(i+1)})
		}
	}
	return fs
}
