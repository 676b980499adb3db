package proc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// maxInterpreters is how many #! lines the kernel follows before it
// gives up with ELOOP (BINPRM_MAX_RECURSION).
const maxInterpreters = 4

// Executable is the ELF file the kernel runs for the command file path: path
// itself, or, for a script, the interpreter its #! line names, followed as
// the kernel follows it. `#!/usr/bin/env NAME` is taken one step further,
// to NAME on PATH, which is what env then runs. Probes resolve against this
// file: the process that runs is the interpreter's.
func Executable(path string) (string, error) {
	for range maxInterpreters + 1 {
		interp, arg, ok, err := shebang(path)
		if err != nil || !ok {
			return path, err
		}
		if base := interp[strings.LastIndexByte(interp, '/')+1:]; base == "env" && arg != "" {
			name := strings.Fields(arg)[0]
			if name == "-S" && len(strings.Fields(arg)) > 1 {
				name = strings.Fields(arg)[1]
			}
			if p, err := exec.LookPath(name); err == nil {
				interp = p
			}
		}
		path = interp
	}
	return "", fmt.Errorf("%s: more than %d interpreters (#! lines) in a row", path, maxInterpreters)
}

// shebang reads the #! line of path: the interpreter and its one optional
// argument (the kernel passes the rest of the line as one argument).
func shebang(path string) (interp, arg string, ok bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", false, err
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadSlice('\n')
	if !bytes.HasPrefix(line, []byte("#!")) {
		return "", "", false, nil
	}
	if err != nil && len(line) < 3 {
		return "", "", false, nil
	}
	rest := strings.TrimSpace(string(line[2:]))
	if rest == "" {
		return "", "", false, nil
	}
	interp = rest
	if i := strings.IndexAny(rest, " \t"); i >= 0 {
		interp, arg = rest[:i], strings.TrimSpace(rest[i:])
	}
	return interp, arg, true, nil
}
