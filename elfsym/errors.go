//go:build linux && amd64

package elfsym

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
)

// msgError is an error whose text is written for the user in full, while
// errors.Is still finds the sentinel it stands for.
type msgError struct {
	msg string
	err error
}

func (e *msgError) Error() string { return e.msg }
func (e *msgError) Unwrap() error { return e.err }

// errorf builds a msgError: the message says everything, sentinel is only
// there for errors.Is.
func errorf(sentinel error, format string, args ...any) error {
	return &msgError{msg: fmt.Sprintf(format, args...), err: sentinel}
}

// openError turns a failure to open an object into a hint.
func openError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errorf(ErrNoObject, "%s does not exist", path)
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return fmt.Errorf("opening %s: %w (run as root or check its permissions)", path, err)
	}
	return fmt.Errorf("opening %s: %w", path, err)
}
