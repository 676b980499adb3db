//go:build linux && amd64

package compare

import (
	"bufio"
	"os"
	"strings"
)

// countLines sums events(line) over the lines of file.
func countLines(file string, events func(string) int) (int, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n += events(sc.Text())
	}
	return n, sc.Err()
}

// prefixed counts a line starting with any of prefixes as one event.
func prefixed(prefixes ...string) func(string) int {
	return func(s string) int {
		for _, p := range prefixes {
			if strings.HasPrefix(s, p) {
				return 1
			}
		}
		return 0
	}
}

// nonEmpty counts every non-blank line as one event.
func nonEmpty(s string) int {
	if strings.TrimSpace(s) != "" {
		return 1
	}
	return 0
}
