//go:build linux && amd64

package elfsym

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/utap/utap/probe"
)

// ltraceConfFiles are where ltrace keeps prototypes (ltrace.conf(5)):
// /usr/share/ltrace/<soname>.conf for one library, /etc/ltrace.conf for
// any. Variables so tests can point elsewhere.
var (
	ltraceSysConf = "/etc/ltrace.conf"
	ltraceLibDir  = "/usr/share/ltrace"
)

// ltraceUserConfs are the files of ltrace's -F (SetLtraceConfigs),
// searched first: their prototypes win over DWARF's too.
var ltraceUserConfs []string

// SetLtraceConfigs makes the prototype files at paths (ltrace's -F FILE)
// come before every other, DWARF included, for the resolutions that
// follow. A file that cannot be read is an error naming it; lines the
// parser cannot take are skipped, as in the system's files (and as
// ltrace warns and goes on), the first said in the returned note.
func SetLtraceConfigs(paths []string) (note string, err error) {
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return "", fmt.Errorf("-F %s: %w", path, err)
		}
		m, perr := parseLtraceConf(f)
		f.Close()
		if perr != nil && note == "" {
			note = fmt.Sprintf("-F %s: %d prototypes; a line skipped: %v", path, len(m), perr)
		}
		ltraceConfs.Lock()
		ltraceConfs.files[path] = m // what userProto reads: parsed once
		ltraceConfs.Unlock()
	}
	ltraceUserConfs = paths
	return note, nil
}

// userProto is name's prototype in the -F files; nil if none has it.
func userProto(name string) *probe.Prototype {
	for _, f := range ltraceUserConfs {
		if p := ltraceConfFile(f)[name]; p != nil {
			return p
		}
	}
	return nil
}

var ltraceConfs = struct {
	sync.Mutex
	files map[string]map[string]*probe.Prototype // path → function → prototype
}{files: map[string]map[string]*probe.Prototype{}}

// ltraceProto looks name up in the library's own prototype file, then in
// the system-wide one; nil when neither has it.
func ltraceProto(object, name string) *probe.Prototype {
	for _, f := range []string{filepath.Join(ltraceLibDir, filepath.Base(object)+".conf"), ltraceSysConf} {
		if p := ltraceConfFile(f)[name]; p != nil {
			return p
		}
	}
	return nil
}

// ltraceConfFile parses a prototype file once; a missing or unreadable
// one holds nothing (prototypes only make the output nicer).
func ltraceConfFile(path string) map[string]*probe.Prototype {
	ltraceConfs.Lock()
	defer ltraceConfs.Unlock()
	if m, ok := ltraceConfs.files[path]; ok {
		return m
	}
	m := map[string]*probe.Prototype{}
	if f, err := os.Open(path); err == nil {
		m, _ = parseLtraceConf(f)
		f.Close()
	}
	ltraceConfs.files[path] = m
	return m
}

// parseLtraceConf reads the subset of ltrace.conf(5) that maps onto
// integer registers: prototypes and typedefs of the primitive types,
// string, addr/file (pointers), hex/oct/octal/bool/enum/bitvec lenses,
// pointers. A prototype using what it cannot show (struct or array by
// value, float, double) keeps its parameters up to there. Lines it
// cannot parse are skipped and the first such error returned.
func parseLtraceConf(r io.Reader) (map[string]*probe.Prototype, error) {
	out := map[string]*probe.Prototype{}
	typedefs := map[string]lens{}
	var first error
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == ';' {
			continue
		}
		p := &confParser{s: line, typedefs: typedefs}
		if err := p.statement(out); err != nil && first == nil {
			first = fmt.Errorf("line %d: %w", n, err)
		}
	}
	return out, first
}

// lens is a parsed ltrace type: its ProtoType, or !ok when it cannot be
// passed in one integer register.
type lens struct {
	t      probe.ProtoType
	ok     bool
	hidden bool
}

type confParser struct {
	s        string
	i        int
	typedefs map[string]lens
}

func (p *confParser) statement(out map[string]*probe.Prototype) error {
	if p.word() == "typedef" {
		name := p.ident()
		if !p.eat('=') {
			return fmt.Errorf("typedef %s: want =", name)
		}
		if p.peek() == "struct" && strings.HasPrefix(strings.TrimSpace(p.s[p.i:]), "struct;") {
			p.typedefs[name] = lens{} // forward declaration
			return nil
		}
		l, err := p.lens()
		if err != nil {
			return fmt.Errorf("typedef %s: %w", name, err)
		}
		p.typedefs[name] = l
		return nil
	}
	p.i = 0
	ret, err := p.lens()
	if err != nil {
		return err
	}
	name := p.ident()
	if name == "" || !p.eat('(') {
		return fmt.Errorf("want NAME(")
	}
	proto := &probe.Prototype{Source: "ltrace.conf", Ret: ret.t}
	if !ret.ok {
		proto.Ret = probe.ProtoType{Kind: probe.ProtoHex, Size: 8}
	}
	for n := 0; !p.eat(')'); n++ {
		if n > 0 {
			if !p.eat(',') {
				return fmt.Errorf("%s: want , or )", name)
			}
		}
		l, err := p.lens()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		switch {
		case proto.More:
		case !l.ok:
			proto.More = true // past this, registers are unknown
		case !l.hidden:
			proto.Params = append(proto.Params, l.t)
		}
	}
	out[name] = proto
	return nil
}

func (p *confParser) skipSpace() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *confParser) eat(c byte) bool {
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// ident reads a name: letters, digits, _ (and = - for enum values).
func (p *confParser) ident() string {
	p.skipSpace()
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			p.i++
			continue
		}
		break
	}
	return p.s[start:p.i]
}

func (p *confParser) word() string { return p.ident() }

func (p *confParser) peek() string {
	i := p.i
	w := p.ident()
	p.i = i
	return w
}

// skipGroup skips a balanced (...) or [...] if one comes next.
func (p *confParser) skipGroup(open, close byte) {
	if !p.eat(open) {
		return
	}
	for depth := 1; p.i < len(p.s) && depth > 0; p.i++ {
		switch p.s[p.i] {
		case open:
			depth++
		case close:
			depth--
		}
	}
}
