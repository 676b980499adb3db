package probe

import (
	"errors"
	"fmt"
)

var (
	// ErrSyntax is wrapped by every *ParseError: a spec that does not parse
	// or does not type-check.
	ErrSyntax = errors.New("probe spec syntax error")
	// ErrFault is wrapped by evaluation errors caused by an unreadable
	// tracee address (a condition is then false, a fetch unreadable).
	ErrFault = errors.New("memory read fault")
	// ErrNoParam is wrapped when a spec names a parameter its site lacks.
	ErrNoParam = errors.New("no such parameter")
	// ErrUnprobeable is wrapped by an engine's refusal of a site, met only
	// once it tried to place the probe (the kernel's own refusal), before
	// the traced command ran: another engine may trace it instead.
	ErrUnprobeable = errors.New("the engine cannot place this probe")
)

// ParseError locates a problem in a spec's text.
type ParseError struct {
	Text  string // the whole spec
	Col   int    // 1-based byte column of the offending token
	Token string // the offending token ("" at the end of the spec)
	Msg   string // what is wrong and, when it helps, what was wanted
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("spec %q column %d: %s", e.Text, e.Col, e.Msg)
}

func (e *ParseError) Unwrap() error { return ErrSyntax }
