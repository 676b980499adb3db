//go:build linux && amd64

package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"
	"github.com/utap/utap/elfsym"
	"github.com/utap/utap/internal/output"
	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/probe"
	"github.com/utap/utap/uretprobe"
)

// ltrace's habits in run and attach: its filter expressions (--ltrace-e,
// -x), -l, -L and -i. They become utap specs; the time stamps (-t, -ttt,
// -r) are output options.
func ltraceFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "ltrace-e", Aliases: []string{"E"}, Usage: "ltrace's -e `FILTER` (repeatable): rules " +
			"SYM[@LIB] joined by + (add) and - (remove), globs, e.g. 'malloc+free@libc.so*', '@MAIN', 'str*@libc-strlen'. " +
			"SYM@LIB probes SYM in the library that defines it (every call, from anywhere); SYM alone or SYM@MAIN the " +
			"calls the program makes through its PLT (SYM@plt), as ltrace's default @MAIN. VAR=VAL is strace's -E: the " +
			"command runs with VAR set to VAL (run only)"},
		&cli.StringSliceFlag{Name: "x", Usage: "ltrace's -x `FILTER` (repeatable): functions of the executable (SYM, SYM@MAIN) " +
			"or of a library (SYM@LIB), e.g. -x 'work*' is the spec work*"},
		&cli.StringSliceFlag{Name: "F", Aliases: []string{"config"}, Usage: "ltrace's -F `FILE` (repeatable): prototypes in ltrace.conf(5)'s syntax, before every other source (the system's ltrace.conf, DWARF)"},
		&cli.StringSliceFlag{Name: "l", Usage: "every function of the library `LIB` (repeatable): -l 'libm.so*' is the spec libm:*"},
		&cli.BoolFlag{Name: "L", Usage: "ltrace's -L (no default @MAIN): utap never adds one, so -L changes nothing; accepted for ltrace's command lines"},
		&cli.BoolFlag{Name: "i", Usage: "show where each call returns to, [0x...] after the pid, as ltrace -i does (the return address read at the function's entry)"},
		&cli.BoolFlag{Name: "t", Usage: "prefix lines with the time of day, HH:MM:SS"},
		&cli.BoolFlag{Name: "ttt", Usage: "prefix lines with the time in seconds since the epoch, microseconds"},
		&cli.BoolFlag{Name: "r", Usage: "prefix lines with the time since the previous line, seconds.microseconds"},
	}
}

// filterRule is one rule of an ltrace filter expression.
type filterRule struct {
	remove bool
	sym    string // glob; "*" when left out
	lib    string // "" for any, "MAIN" for the executable, else a glob or a path
}

// parseFilter parses an ltrace filter expression, {[+-][SYM][@LIB]}.
// Regular expressions (/re/), anchors (^ $) and negation (!) are refused.
func parseFilter(expr string) ([]filterRule, error) {
	bad := func(why string) error {
		return fmt.Errorf("filter %q: %s (supported: rules SYM[@LIB] joined by + and -, SYM and LIB globs, @MAIN for the executable)", expr, why)
	}
	if strings.TrimSpace(expr) == "" {
		return nil, bad("empty")
	}
	switch {
	case strings.HasPrefix(expr, "!"):
		return nil, bad("negation (!) is not supported")
	case strings.ContainsAny(expr, "^$"):
		return nil, bad("anchors (^ $) are not supported")
	case strings.ContainsAny(expr, " \t"):
		return nil, bad("blanks are not allowed")
	}
	var rules []filterRule
	rest := expr
	for i := 0; rest != ""; i++ {
		r := filterRule{}
		switch rest[0] {
		case '+':
			rest = rest[1:]
		case '-':
			r.remove = true
			rest = rest[1:]
		default:
			if i > 0 {
				return nil, bad("rules are joined by + or -")
			}
		}
		end := strings.IndexAny(rest, "+-")
		if end < 0 {
			end = len(rest)
		}
		text := rest[:end]
		rest = rest[end:]
		sym, lib, hasLib := strings.Cut(text, "@")
		if strings.HasPrefix(sym, "/") || strings.HasPrefix(lib, "/") && strings.HasSuffix(lib, "/") && len(lib) > 1 {
			return nil, bad("regular expressions (/re/) are not supported")
		}
		if strings.Contains(lib, "@") {
			return nil, bad(fmt.Sprintf("rule %q has two @", text))
		}
		if hasLib && lib == "" {
			return nil, bad(fmt.Sprintf("rule %q: no library after @", text))
		}
		if sym == "" {
			sym = "*"
		}
		if _, err := path.Match(sym, ""); err != nil {
			return nil, bad(fmt.Sprintf("bad pattern %q", sym))
		}
		r.sym, r.lib = sym, lib
		if i == 0 && r.remove {
			// "as if there was another rule @ in front of it"
			rules = append(rules, filterRule{sym: "*"})
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// filterObject is the utap object of a library pattern: MAIN and ""
// the executable, a path as is, a name as is (libc, libc.so.6), and the
// globs NAME.so* and NAME.so.* the short name NAME.
func filterObject(expr, lib string) (string, error) {
	switch {
	case lib == "" || lib == "MAIN":
		return "", nil
	case strings.HasPrefix(lib, "/"):
		if strings.ContainsAny(lib, "*?[") {
			return "", fmt.Errorf("filter %q: library path %q: globs in paths are not supported", expr, lib)
		}
		return lib, nil
	}
	name := lib
	for _, suf := range []string{".so*", ".so.*"} {
		if n, ok := strings.CutSuffix(lib, suf); ok {
			name = n
			break
		}
	}
	if strings.ContainsAny(name, "*?[]\\:") || name == "" {
		return "", fmt.Errorf("filter %q: library pattern %q: only NAME, NAME.so* and NAME.so.* (or a path, or MAIN) are supported", expr, lib)
	}
	return name, nil
}

// filterSpecs turns an ltrace filter into spec texts, and the rules that
// remove functions from what the specs match (applied to resolved sites).
// plt: a rule without a library (or @MAIN) picks the calls the executable
// makes through its PLT (ltrace -e), else its functions (ltrace -x).
func filterSpecs(expr string, plt bool) (specs []string, removes []filterRule, err error) {
	rules, err := parseFilter(expr)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range rules {
		obj, err := filterObject(expr, r.lib)
		if err != nil {
			return nil, nil, err
		}
		if r.remove {
			removes = append(removes, filterRule{remove: true, sym: r.sym, lib: r.lib})
			continue
		}
		if r.lib == "" && !plt && r.sym == "*" {
			return nil, nil, fmt.Errorf("filter %q: a rule without a symbol or a library would probe every function of the executable; name them (e.g. 'work*' or '*@MAIN')", expr)
		}
		sym := r.sym
		if obj == "" && plt {
			sym += "@plt"
		}
		spec := sym
		if obj != "" {
			spec = obj + ":" + sym
		}
		specs = append(specs, spec)
	}
	if len(specs) == 0 {
		return nil, nil, fmt.Errorf("filter %q adds no function", expr)
	}
	// A rule removed before it was added removes nothing: keep only the
	// removals after the first addition, as ltrace applies them in order.
	return specs, removes, nil
}

// removes says whether a removal rule drops a resolved site.
func (r filterRule) removes(s probe.Site, exe string) bool {
	name := strings.TrimSuffix(s.Func, "@plt")
	if !globMatch(r.sym, name) && !globMatch(r.sym, s.Func) {
		return false
	}
	switch {
	case r.lib == "":
		return true
	case r.lib == "MAIN":
		return s.Object == exe
	case strings.HasPrefix(r.lib, "/"):
		return s.Object == r.lib
	}
	base := s.Object[strings.LastIndexByte(s.Object, '/')+1:]
	obj, err := filterObject("", r.lib)
	if err != nil {
		return false
	}
	if globMatch(r.lib, base) || base == obj {
		return true
	}
	i := strings.Index(base, ".so")
	return i > 0 && base[:i] == obj
}

func globMatch(pattern, name string) bool {
	ok, _ := path.Match(pattern, name)
	return ok
}

// ltraceSpecs parses --ltrace-e, -x and -l into specs, and the removal
// rules their filters hold.
func ltraceSpecs(c *cli.Context) ([]*probe.Spec, []filterRule, error) {
	var texts []string
	var removes []filterRule
	for _, f := range []struct {
		flag string
		plt  bool
	}{{"ltrace-e", true}, {"x", false}} {
		for _, expr := range c.StringSlice(f.flag) {
			if f.flag == "ltrace-e" && envAssign.MatchString(expr) {
				continue // strace's -E VAR=VAL (commandEnv)
			}
			s, r, err := filterSpecs(expr, f.plt)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", flagName(f.flag), err)
			}
			texts = append(texts, s...)
			removes = append(removes, r...)
		}
	}
	for _, lib := range c.StringSlice("l") {
		obj, err := filterObject(lib, lib)
		if err != nil || obj == "" {
			return nil, nil, fmt.Errorf("-l %q: want a library: NAME, NAME.so*, NAME.so.* or a path", lib)
		}
		texts = append(texts, obj+":*")
	}
	var specs []*probe.Spec
	for _, text := range texts {
		s, err := probe.Parse(text)
		if err != nil {
			return nil, nil, err
		}
		// ltrace -e 'memcpy+memmove' traces memcpy in a program
		// without memmove: a filter's name may match nothing.
		s.Optional = true
		specs = append(specs, s)
	}
	return specs, removes, nil
}

func flagName(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// resolver resolves specs for the trace: elfsym.ResolveNotes, less the
// sites the filters' removal rules drop, keeping the notices to print.
type resolver struct {
	removes  []filterRule
	filtered map[[2]string]bool // object and symbol of the specs the filters made (and their return twins): removals apply to them only

	user  map[*probe.Spec]bool // the specs given: the others are return twins (cmd/utap/twins.go)
	mu    sync.Mutex
	notes []string
	seen  map[string]bool
}

func (r *resolver) resolve(specs []*probe.Spec, t elfsym.Target) ([]probe.Site, error) {
	if onlySyscalls(specs) {
		return nil, nil
	}
	sites, notes, err := elfsym.ResolveNotes(specs, t)
	if err != nil && r.pltFallback(specs, t, err) {
		sites, notes, err = elfsym.ResolveNotes(specs, t)
	}
	if err != nil {
		return nil, err
	}
	for _, n := range notes {
		r.note(n)
	}
	sites = r.twinsFollow(specs, sites)
	if len(r.removes) == 0 {
		return sites, nil
	}
	exe := t.Exe
	if t.PID > 0 {
		exe, _ = proc.Exe(t.PID)
	} else if abs, err := filepath.Abs(exe); err == nil {
		exe = abs
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			exe = real
		}
	}
	kept := sites[:0]
	for _, s := range sites {
		drop := false
		for _, rm := range r.removes {
			if r.filtered[[2]string{s.Spec.Object, s.Spec.Symbol}] && rm.removes(s, exe) {
				drop = true
			}
		}
		if !drop {
			kept = append(kept, s)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("the filters' - rules remove every function the specs match")
	}
	return kept, nil
}

// note keeps a notice to print, once.
func (r *resolver) note(n string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	if !r.seen[n] {
		r.seen[n] = true
		r.notes = append(r.notes, n)
	}
}

// takeNotes returns the notices gathered so far, once.
func (r *resolver) takeNotes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.notes
	r.notes = nil
	return n
}

// probeFunc is a site as events name it: its probe and function.
type probeFunc struct {
	probe int
	fn    string
}

// readAllSpecs reads -e, --probes and the ltrace flags' specs, with the
// resolver that applies the filters' removals.
func readAllSpecs(c *cli.Context, filter *eventFilter) (specs []*probe.Spec, rs *resolver, err error) {
	lt, removes, err := ltraceSpecs(c)
	if err != nil {
		return nil, nil, err
	}
	rs = &resolver{removes: removes, filtered: map[[2]string]bool{}, user: map[*probe.Spec]bool{}}
	defer func() {
		for _, s := range specs {
			rs.user[s] = true
		}
	}()
	for _, s := range lt {
		rs.filtered[[2]string{s.Object, s.Symbol}] = true
	}
	if len(lt) > 0 && len(c.StringSlice("e")) == 0 && c.String("probes") == "" && !c.Bool("syscalls") {
		specs = lt
		return specs, rs, nil
	}
	if specs, err = readSpecs(c, filter, len(lt) == 0); err != nil {
		return nil, nil, err
	}
	specs = append(specs, lt...)
	return specs, rs, nil
}

// ltraceClock is the time stamp -t, -ttt and -r ask for.
func ltraceClock(c *cli.Context) output.Clock {
	switch {
	case c.Bool("r"):
		return output.ClockRelative
	case c.Bool("ttt"):
		return output.ClockEpoch
	case c.Bool("t"):
		return output.ClockTimeOfDay
	}
	return output.ClockNone
}

// ltraceAddr is -i's address of an event, nil without -i.
func ltraceAddr(c *cli.Context) func(*probe.Event) (uint64, bool) {
	if !c.Bool("i") {
		return nil
	}
	return func(ev *probe.Event) (uint64, bool) { return ev.Caller, ev.Caller != 0 }
}

// twinsFollow drops the sites of a return twin whose function has no
// site of its entry probe (an overload skipped for its parameter names, a
// function a filter removed): its returns would come without an entry.
// It drops those of a function whose return no probe survives (setjmp,
// _start: uretprobe.NoReturnProbe) too, and says so: its calls show
// their entries only.
func (r *resolver) twinsFollow(specs []*probe.Spec, sites []probe.Site) []probe.Site {
	type fn struct {
		obj, sym string
		file     string
		addr     uint64
	}
	entries := map[fn]bool{}
	for _, s := range sites {
		if s.Spec.Kind == probe.Entry {
			entries[fn{s.Spec.Object, s.Spec.Symbol, s.Object, s.FuncAddr}] = true
		}
	}
	kept := sites[:0]
	var whys []string
	unpaired := map[string][]string{} // by why: the functions, once each
	for _, s := range sites {
		if twin := s.Spec.Kind == probe.Return && !r.user[s.Spec]; twin {
			if !entries[fn{s.Spec.Object, s.Spec.Symbol, s.Object, s.FuncAddr}] {
				continue
			}
			if why := uretprobe.NoReturnProbe(s.Func); why != "" {
				if unpaired[why] == nil {
					whys = append(whys, why)
				}
				if !slices.Contains(unpaired[why], s.Func) {
					unpaired[why] = append(unpaired[why], s.Func)
				}
				continue
			}
		}
		kept = append(kept, s)
	}
	// One line a reason: -l libc.so.6 named six functions, six lines.
	for _, why := range whys {
		if fns := unpaired[why]; len(fns) == 1 {
			r.note(fmt.Sprintf("%s: its calls show no return value: %s", fns[0], why))
		} else {
			r.note(fmt.Sprintf("%s: their calls show no return value: %s", strings.Join(fns, ", "), strings.Replace(why, "it ", "each ", 1)))
		}
	}
	return kept
}

// envAssign is strace's -E VAR=VAL, which no ltrace filter can be (a
// filter has no "="): the command's environment with VAR set.
var envAssign = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// commandEnv is the command's environment: utap's, with strace's -E
// VAR=VAL assignments; nil (inherit) without any.
func commandEnv(c *cli.Context) []string {
	var env []string
	for _, expr := range c.StringSlice("ltrace-e") {
		if !envAssign.MatchString(expr) {
			continue
		}
		if env == nil {
			env = os.Environ()
		}
		name, _, _ := strings.Cut(expr, "=")
		env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
		env = append(env, expr)
	}
	return env
}
