package probe

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// ParseFile parses a probes file: one spec a line; blank lines and
// everything from a '#' outside a quoted literal are ignored. Errors name
// the file and line, and wrap the *ParseError.
func ParseFile(r io.Reader, name string) ([]*Spec, error) {
	var specs []*Spec
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(stripComment(sc.Text()))
		if text == "" {
			continue
		}
		s, err := Parse(text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		specs = append(specs, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return specs, nil
}

// stripComment cuts line at the first '#' that is not inside a string or
// character literal.
func stripComment(line string) string {
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '#':
			return line[:i]
		case '"', '\'':
			end := quoteEnd(line, i)
			if end < 0 {
				return line // let Parse report the unterminated literal
			}
			i = end - 1
		}
	}
	return line
}
