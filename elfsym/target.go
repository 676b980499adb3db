//go:build linux && amd64

package elfsym

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/probe"
)

// loader holds the objects of one target for the duration of one call:
// each file is parsed once however many specs name it.
type loader struct {
	pid     int
	maps    []proc.Mapping
	exe     *object
	objs    map[string]*object
	mapped  []string // PID: the mapped ELF files, executable first
	deps    []string // the executable's libraries per DT_NEEDED (lazy)
	depsSet bool
}

func newLoader(t Target) (*loader, error) {
	ld := &loader{pid: t.PID, objs: map[string]*object{}}
	if t.PID > 0 {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", t.PID)); err != nil {
			return nil, proc.Error(t.PID, "/proc/PID", err)
		}
		exe, err := proc.Exe(t.PID)
		if err != nil {
			return nil, err
		}
		if ld.maps, err = proc.Maps(t.PID); err != nil {
			return nil, err
		}
		ld.mapped = []string{exe}
		for _, p := range proc.Objects(ld.maps) {
			if p != exe {
				ld.mapped = append(ld.mapped, p)
			}
		}
		if ld.exe, err = ld.open(exe); err != nil {
			// The executable may be gone or in another mount namespace.
			if ld.exe, err = ld.openAs(fmt.Sprintf("/proc/%d/exe", t.PID), exe); err != nil {
				return nil, err
			}
		}
		return ld, nil
	}
	if t.Exe == "" {
		return nil, fmt.Errorf("elfsym: target has neither an executable nor a PID")
	}
	path := t.Exe
	if !strings.Contains(path, "/") {
		if p, err := exec.LookPath(path); err == nil {
			path = p
		}
	}
	path, err := canonical(path)
	if err != nil {
		return nil, openError(t.Exe, err)
	}
	if ld.exe, err = ld.open(path); err != nil {
		return nil, err
	}
	return ld, nil
}

// canonical makes path absolute with symlinks resolved, as the kernel
// shows it in /proc/PID/maps.
func canonical(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	return abs, nil
}

func (ld *loader) open(path string) (*object, error) { return ld.openAs(path, path) }

// openAs opens the file at src and names it path.
func (ld *loader) openAs(src, path string) (*object, error) {
	if o, ok := ld.objs[path]; ok {
		return o, nil
	}
	o, err := cachedObject(src, path)
	if err != nil {
		return nil, err
	}
	ld.objs[path] = o
	return o, nil
}

// close is a no-op while objects are cached for the process's life; it
// marks where they would be released.
func (ld *loader) close() {}

// objects returns the paths of the target's objects, executable first:
// for a process what it has mapped, else what the loader would map.
func (ld *loader) objects() []string {
	if ld.pid > 0 {
		return ld.mapped
	}
	return append([]string{ld.exe.path}, ld.dependencies1()...)
}

// dependencies1 computes the executable's libraries once.
func (ld *loader) dependencies1() []string {
	if !ld.depsSet {
		ld.deps, ld.depsSet = ld.dependencies(ld.exe), true
	}
	return ld.deps
}

// objectFor finds the object a spec names: the executable for "", a
// path, or a short name ("libc" for libc.so.6) among the target's objects.
// For a process, libraries it has not mapped yet are looked up as for an
// executable that has not started, so probes can wait for them.
func (ld *loader) objectFor(spec *probe.Spec) (*object, error) {
	name := spec.Object
	if name == "" {
		return ld.exe, nil
	}
	candidates := ld.objects()
	if ld.pid > 0 {
		candidates = append(append([]string{}, candidates...), ld.dependencies1()...)
	}
	if strings.Contains(name, "/") {
		want, err := canonical(name)
		if err != nil {
			return nil, errorf(ErrNoObject, "spec %q: %s does not exist", spec.Text, name)
		}
		for _, p := range candidates {
			if p == want {
				return ld.open(p)
			}
		}
		// Not a dependency: perhaps dlopen'ed later; probe it anyway.
		return ld.open(want)
	}
	for _, p := range candidates {
		if shortNameMatches(name, filepath.Base(p)) {
			return ld.open(p)
		}
	}
	var bases []string
	for _, p := range ld.objects() {
		bases = append(bases, filepath.Base(p))
	}
	return nil, errorf(ErrNoObject, "spec %q: no object %q among %s (a library the program loads later with dlopen: give its path, /path/to/%s:%s)",
		spec.Text, name, strings.Join(bases, ", "), libFileName(name), spec.Symbol)
}

// shortNameMatches says whether a short object name designates the file
// base: the whole name, or the part before ".so" ("libc" ~ libc.so.6).
func shortNameMatches(name, base string) bool {
	if name == base {
		return true
	}
	i := strings.Index(base, ".so")
	return i > 0 && base[:i] == name
}

// libFileName suggests the file name of a library named short: "plug" and
// "libplug" are libplug.so.
func libFileName(short string) string {
	if !strings.HasPrefix(short, "lib") {
		short = "lib" + short
	}
	if !strings.Contains(short, ".so") {
		short += ".so"
	}
	return short
}
