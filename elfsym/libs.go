//go:build linux && amd64

package elfsym

import (
	"bufio"
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// defaultLibDirs are searched last by the x86-64 loader (glibc's
// system dirs plus the multiarch ones Debian's ld.so.conf adds).
var defaultLibDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}

// dependencies returns the paths of the objects the dynamic loader would
// map for exe before it runs: its interpreter and its DT_NEEDED libraries,
// recursively, breadth first. Libraries not found are left out: dlopen'ed
// ones cannot be known either.
func (ld *loader) dependencies(exe *object) []string {
	var out []string
	seen := map[string]bool{exe.path: true}
	add := func(p string) bool {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		if seen[p] {
			return false
		}
		seen[p] = true
		out = append(out, p)
		return true
	}
	for _, p := range exe.elf.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err == nil {
				add(string(bytes.TrimRight(b, "\x00")))
			}
		}
	}
	exeRpath := rpaths(exe, elf.DT_RPATH)
	queue := []*object{exe}
	for len(queue) > 0 {
		o := queue[0]
		queue = queue[1:]
		needed, _ := o.elf.DynString(elf.DT_NEEDED)
		for _, name := range needed {
			path := findLibrary(name, o, exeRpath)
			if path == "" || !add(path) {
				continue
			}
			if lib, err := ld.open(out[len(out)-1]); err == nil {
				queue = append(queue, lib)
			}
		}
	}
	return out
}

// findLibrary searches for a DT_NEEDED name in the loader's order:
// DT_RPATH (of the needing object, then the executable) unless the object
// has DT_RUNPATH, LD_LIBRARY_PATH, DT_RUNPATH, ld.so.cache, default dirs.
func findLibrary(name string, from *object, exeRpath []string) string {
	if strings.Contains(name, "/") {
		if usableLib(name) {
			return name
		}
		return ""
	}
	var dirs []string
	runpath := rpaths(from, elf.DT_RUNPATH)
	if len(runpath) == 0 {
		dirs = append(dirs, rpaths(from, elf.DT_RPATH)...)
		dirs = append(dirs, exeRpath...)
	}
	if env := os.Getenv("LD_LIBRARY_PATH"); env != "" {
		dirs = append(dirs, strings.Split(env, ":")...)
	}
	dirs = append(dirs, runpath...)
	for _, d := range dirs {
		if p := filepath.Join(d, name); d != "" && usableLib(p) {
			return p
		}
	}
	if p, ok := ldCache()[name]; ok && usableLib(p) {
		return p
	}
	for _, d := range defaultLibDirs {
		if p := filepath.Join(d, name); usableLib(p) {
			return p
		}
	}
	return ""
}

// rpaths returns the directories of a DT_RPATH or DT_RUNPATH entry, with
// $ORIGIN replaced by the directory of the object.
func rpaths(o *object, tag elf.DynTag) []string {
	vals, _ := o.elf.DynString(tag)
	var dirs []string
	origin := filepath.Dir(o.path)
	for _, v := range vals {
		for _, d := range strings.Split(v, ":") {
			d = strings.ReplaceAll(d, "${ORIGIN}", origin)
			d = strings.ReplaceAll(d, "$ORIGIN", origin)
			if d != "" {
				dirs = append(dirs, d)
			}
		}
	}
	return dirs
}

// usableLib says whether path is an x86-64 ELF shared object the loader
// would accept (32-bit copies share names in some directories).
func usableLib(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return f.Class == elf.ELFCLASS64 && f.Machine == elf.EM_X86_64
}

var (
	ldCacheOnce sync.Once
	ldCacheMap  map[string]string
)

// ldCache maps library names to paths as /etc/ld.so.cache does, from
// `ldconfig -p`; when that fails, from the directories /etc/ld.so.conf
// names.
func ldCache() map[string]string {
	ldCacheOnce.Do(func() {
		ldCacheMap = map[string]string{}
		out, err := exec.Command("ldconfig", "-p").Output()
		if err != nil {
			if out, err = exec.Command("/sbin/ldconfig", "-p").Output(); err != nil {
				for _, d := range ldConfDirs("/etc/ld.so.conf", 0) {
					ents, _ := os.ReadDir(d)
					for _, e := range ents {
						if _, dup := ldCacheMap[e.Name()]; !dup && strings.Contains(e.Name(), ".so") {
							ldCacheMap[e.Name()] = filepath.Join(d, e.Name())
						}
					}
				}
				return
			}
		}
		// "\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1"
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			name, rest, ok := strings.Cut(line, " (")
			if !ok || !strings.Contains(rest, "x86-64") {
				continue
			}
			_, path, ok := strings.Cut(rest, "=> ")
			if _, dup := ldCacheMap[name]; ok && !dup {
				ldCacheMap[name] = path
			}
		}
	})
	return ldCacheMap
}

// ldConfDirs reads the directories of an ld.so.conf file, following its
// include lines.
func ldConfDirs(conf string, depth int) []string {
	data, err := os.ReadFile(conf)
	if err != nil || depth > 4 {
		return nil
	}
	var dirs []string
	for _, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "#")
		line = strings.TrimSpace(line)
		if inc, ok := strings.CutPrefix(line, "include "); ok {
			pat := strings.TrimSpace(inc)
			if !filepath.IsAbs(pat) {
				pat = filepath.Join(filepath.Dir(conf), pat)
			}
			matches, _ := filepath.Glob(pat)
			for _, m := range matches {
				dirs = append(dirs, ldConfDirs(m, depth+1)...)
			}
		} else if line != "" {
			dirs = append(dirs, line)
		}
	}
	return dirs
}

// LibraryPath finds the library a short name designates (libc, libz.so.1)
// the way the loader's cache knows it: for `utap list libc`, with no
// program to take it from. The shortest matching name wins (libc.so.6
// before libc.so.6.1).
func LibraryPath(short string) (string, bool) {
	best := ""
	for name := range ldCache() {
		if shortNameMatches(short, name) && (best == "" || len(name) < len(best) || len(name) == len(best) && name < best) {
			best = name
		}
	}
	if best == "" {
		return "", false
	}
	return ldCache()[best], true
}
