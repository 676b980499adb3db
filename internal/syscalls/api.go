//go:build linux && amd64

// Package syscalls knows the system calls of linux/amd64 the way strace
// shows them: names and numbers, each argument's kind, the classes
// (%file, %network, ...), which of the tracee's memory a call's line needs
// (Captures: what the engines read at entry or exit), and the decoding of a
// call into strace's text.
//
// Both engines capture the same raw material (registers and the Captures'
// bytes) and leave all decoding to this package, so their lines agree.
package syscalls

import (
	"errors"
	"fmt"

	"github.com/utap/utap/probe"
)

// Info is one system call.
type Info struct {
	Nr      int
	Name    string
	Args    []Arg // as many as the call takes
	Classes Class
	// Captures lists the memory its line shows, in the order a Call's
	// Entry/Exit slices hold it. Fixed per call; sizes that depend on the
	// string limit (-s) are capped by the engine at Capture.Max.
	Captures []Capture
	// NoReturn: never returns (exit, exit_group; execve returns in its new image):
	// entry captures are all there is.
	NoReturn bool
	// Tracepoint names the kernel's syscalls:sys_enter_NAME and
	// sys_exit_NAME events for this call ("newstat" for stat); "" when it
	// has none (raw_syscalls sees every call).
	Tracepoint string

	// Set at init (table.go): the hand-written decoder of the arguments,
	// nil for the generic one; plainResult: the result shows in decimal,
	// no decoding.
	special     func(*ctx) ([]string, int)
	plainResult bool
}

// Arg is one argument, as the kernel's tracepoint format names it.
type Arg struct {
	Name  string // "filename"
	CType string // "const char *"
	Kind  Kind
}

// Kind is how an argument is shown.
type Kind uint8

// Class is a set of strace's syscall classes.
type Class uint32

// Capture is one piece of tracee memory a call's line needs.
type Capture struct {
	Arg  int  // 0-based argument holding the address
	Exit bool // read when the call returns (an output), else at entry
	// What to read: a NUL-terminated string (Str), an array of string
	// pointers ending at NULL (StrArray, execve's argv), or bytes: Size
	// fixed, or the length in argument LenArg (>= 0), or the return value
	// (LenRet), each capped at Max.
	Str      bool
	StrArray bool
	Size     int
	LenArg   int // -1: none
	LenRet   bool
	// Max caps the bytes read (strings: including the NUL); 0 means it
	// depends on -s: the engines use MaxFor(c, strsize) in every case.
	Max int
	// Elem is the size of one element when LenArg or LenRet counts
	// elements rather than bytes (poll's fds: 8); 0 means bytes.
	Elem int
	// CountOnly (StrArray): only the number of strings is shown (envp's
	// "/* 25 vars */"); an engine may store each string as a lone NUL.
	CountOnly bool
	// Iov: the address is an array of LenArg struct iovec. The bytes are,
	// per element (at most MaxIovElems): the 16-byte iovec as in memory
	// (iov_base, iov_len), an 8-byte little-endian count n, then n bytes
	// read from iov_base. n is at most MaxFor(c, strsize) and, when
	// LenRet (readv), at most what the return value leaves after the
	// earlier elements; IovUnread (no bytes follow) when iov_base could
	// not be read.
	Iov bool
	// SP: the address is the stack pointer when the call was made, plus
	// Off, not an argument: rt_sigreturn's signal frame, whose mask
	// strace shows ({mask=[...]}).
	SP  bool
	Off int
	// Indirect: the address is the pointer found at the argument's
	// address plus Off (clone3's parent_tid, inside its clone_args);
	// Size bytes are read there.
	Indirect bool
	// Msg: the address is a struct msghdr (sendmsg, recvmsg): the bytes
	// are the 56-byte msghdr, then what it points to, each part an 8-byte
	// count n then n bytes: the name (at most 128), the iovecs (as an Iov
	// capture's, msg_iovlen elements) and the control data (at most 256).
	Msg bool
	// Counted: a getdents buffer whose line shows only its records'
	// count: an engine may capture its first bytes and count the rest
	// (WithDirents). ShowDirents clears it (-e abbrev=none).
	Counted bool
}

// Call is one traced system call as an engine captured it (probe.Syscall,
// named here for the decoder). Entry and Exit hold the bytes of
// Info.Captures, index for index; StrArray captures are the strings joined
// with NUL bytes, each terminated, with a final extra NUL when the array
// ended before the cap.
// IovUnread is an Iov capture element's count when its bytes could not
// be read: strace then shows iov_base as an address.
const IovUnread = 1 << 63

// iovCount is an Iov element's count word: the bytes that follow, and
// whether they could not be read.
func iovCount(w uint64) (int, bool) {
	if w == IovUnread {
		return 0, true
	}
	return int(min(w, 1<<31)), false
}

type Call = probe.Syscall

// DefaultStrSize is strace's default -s, the string limit of captures
// when probe.Target.StrSize is 0.
const DefaultStrSize = 32

// Options are strace's display flags.
type Options struct {
	StrSize int // -s: bytes of a string shown (strace's default 32)
	// FdPath (-y) returns the path an fd of the traced process names,
	// "" when unknown; nil: fds are shown as numbers.
	FdPath func(fd int) string
	// Xlat (-X) is how named constants show in the arguments.
	Xlat XlatStyle
	// Raw (-e raw=): the call's arguments and result undecoded, in hex.
	Raw bool
	// Terse (-e verbose= without this call): structures show as their
	// addresses.
	Terse bool
	// Full (-e abbrev= without this call, strace's -v): structures show
	// every field, and execve's environment its strings.
	Full bool
	// Hex (strace -xx): every string and buffer in hex, "\x2f\x65".
	Hex bool
}

// XlatStyle is strace's -X: how named constants show.
type XlatStyle int

const (
	XlatAbbrev  XlatStyle = iota // names: strace's default
	XlatRaw                      // numbers
	XlatVerbose                  // numbers, the names in a comment
)

// ParseXlat is -X's argument: abbrev, raw or verbose.
func ParseXlat(s string) (XlatStyle, error) {
	switch s {
	case "abbrev":
		return XlatAbbrev, nil
	case "raw":
		return XlatRaw, nil
	case "verbose":
		return XlatVerbose, nil
	}
	return 0, fmt.Errorf("-X %s: %w (abbrev, raw or verbose)", s, ErrXlatStyle)
}

// ErrXlatStyle is an unknown -X style.
var ErrXlatStyle = errors.New("unknown constant style")
