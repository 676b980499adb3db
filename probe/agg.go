package probe

import (
	"strconv"
	"strings"

	"github.com/utap/utap/internal/agg"
)

// Agg makes a spec an aggregation (spec '=>' [@name '='] func(...) [by
// key, ...]): its events feed a map (internal/agg) instead of being
// printed. Parse puts the aggregated value and the keys that are
// expressions in Spec.Fetches, so every engine fetches them as any other
// fetch; Value and AggKey.Fetch index them.
type Agg struct {
	// Name is the map's name as given ("@bytes", or "@" alone); "" when
	// none was given: the CLI names the map after the spec.
	Name string
	Kind agg.Kind // the function, and lhist's min, max and step
	// Value is the index in Spec.Fetches of the aggregated expression;
	// -1 for count().
	Value int
	Keys  []AggKey
	// Bpftrace: the spec was written as a bpftrace program (LOC [/pred/]
	// { @map[keys] = func(x); }) and read as the utap spec Spec.String()
	// prints. ShiftedArgs: its argN were renumbered arg(N+1) (bpftrace's
	// arg0 is utap's arg1) and retval read as ret.
	Bpftrace, ShiftedArgs bool
}

// AggDelta is a partial aggregate of one key of a spec's map, computed by
// an engine where the probe fires (Target.Aggregate). It travels in an
// Event of Kind "agg" whose ProbeIndex names the spec.
type AggDelta struct {
	// Key holds a value per Spec.Agg.Keys, in order: KeyExpr as its fetch
	// would show it, KeyPID and KeyTID as Int, KeyComm as Str (or Int, a
	// pid whose comm the CLI reads), KeyFunc as Str; KeyUstack's value is
	// unused: the event's Stack is the key.
	Key   []Value
	State agg.State
	// Unreadable counts the values left out because their read faulted.
	Unreadable uint64
}

// KeyKind says where a key's value comes from.
type KeyKind uint8

const (
	KeyExpr   KeyKind = iota // a fetched expression (Spec.Fetches[Fetch])
	KeyPID                   // the event's process id
	KeyTID                   // the event's thread id
	KeyComm                  // the process's name (/proc/PID/comm), read by the CLI
	KeyUstack                // the user stack (-k), symbolized frames
	KeyFunc                  // the probed function's name
)

// keyWords are the keys that are not expressions: the CLI supplies them
// from the event. pid and tid are expressions too, but as a whole key
// they come from the event, which needs no fetch.
var keyWords = map[string]KeyKind{"comm": KeyComm, "ustack": KeyUstack, "func": KeyFunc}

// AggKey is one key of an aggregation.
type AggKey struct {
	Kind  KeyKind
	Fetch int // KeyExpr: index in Spec.Fetches
	Depth int // KeyUstack: at most this many frames; 0: all the event has
}

// agg parses what follows '=>' into s.Agg and s.Fetches: the spec's own
// fetches are not shown, so they give way to the aggregation's.
func (p *parser) agg(s *Spec) {
	a := &Agg{Value: -1}
	s.Fetches = nil
	if p.is("@") {
		at := p.tok
		p.next()
		a.Name = "@"
		if p.tok.kind == tIdent && p.tok.pos == at.pos+1 {
			a.Name += p.tok.text
			p.next()
		}
		p.expect("=", "'=' after the map name "+a.Name)
	}
	fn := p.tok
	f, ok := agg.FuncByName(fn.text)
	if fn.kind != tIdent || !ok {
		if fn.kind == tEOF {
			p.unexpected("an aggregation: count(), sum(x), min(x), max(x), avg(x), stats(x), hist(x) or lhist(x, min, max, step)")
		}
		p.fail(fn.pos, fn.text, "unknown aggregation %s, want count(), sum(x), min(x), max(x), avg(x), stats(x), hist(x) or lhist(x, min, max, step)", fn.describe())
	}
	a.Kind.Func = f
	p.next()
	p.expect("(", "'(' after "+fn.text)
	if f != agg.Count {
		start := p.tok.pos
		if p.is(")") || p.tok.kind == tEOF {
			p.unexpected("the value to aggregate, e.g. " + fn.text + "(arg1)")
		}
		n := p.expr()
		p.needInt(n, fn.text+"()")
		a.Value = len(s.Fetches)
		s.Fetches = append(s.Fetches, Fetch{Expr: n.Expr, Text: strings.TrimSpace(p.text[start:p.prevEnd])})
	}
	if f == agg.LHist {
		for _, v := range []*int64{&a.Kind.Min, &a.Kind.Max, &a.Kind.Step} {
			p.expect(",", "',' and lhist's min, max and step: lhist(x, 0, 100, 10)")
			*v = p.integer()
		}
		if err := a.Kind.Check(); err != nil {
			p.fail(fn.pos, fn.text, "%v", err)
		}
	}
	if f == agg.Count && !p.is(")") {
		p.fail(p.tok.pos, p.tok.text, "count() takes no value; use sum(x) to add values up")
	}
	p.expect(")", "')' to close "+fn.text+"(")
	if p.tok.kind == tIdent && p.tok.text == "by" {
		p.next()
		for {
			a.Keys = append(a.Keys, p.aggKey(s))
			if !p.is(",") {
				break
			}
			p.next()
		}
	}
	s.Agg = a
}

// integer parses an optionally negative integer literal (lhist's bounds).
func (p *parser) integer() int64 {
	neg := p.is("-")
	if neg {
		p.next()
	}
	if p.tok.kind != tInt || p.tok.val > 1<<62 {
		p.unexpected("an integer")
	}
	v := int64(p.tok.val)
	p.next()
	if neg {
		v = -v
	}
	return v
}

// aggKey parses one key: comm, ustack[(N)], func, or an expression with
// an optional format (pid and tid alone come from the event).
func (p *parser) aggKey(s *Spec) AggKey {
	t := p.tok
	if t.kind == tEOF {
		p.unexpected("a key after 'by': an expression, comm, ustack, func, pid or tid")
	}
	if k, ok := keyWords[t.text]; ok && t.kind == tIdent {
		p.next()
		key := AggKey{Kind: k}
		if k == KeyUstack && p.is("(") {
			p.next()
			d := p.integer()
			if d < 1 || d > 127 {
				p.fail(t.pos, t.text, "ustack(%d): give 1 to 127 frames", d)
			}
			key.Depth = int(d)
			p.expect(")", "')' to close ustack(")
		}
		return key
	}
	start := p.tok.pos
	f := p.fetch()
	f.Text = strings.TrimSpace(p.text[start:p.prevEnd])
	if f.Format == FormatDefault {
		switch f.Expr {
		case BuiltinPID:
			return AggKey{Kind: KeyPID}
		case BuiltinTID:
			return AggKey{Kind: KeyTID}
		}
	}
	s.Fetches = append(s.Fetches, f)
	return AggKey{Kind: KeyExpr, Fetch: len(s.Fetches) - 1}
}

// String prints the aggregation as the spec's tail: "=> [@name = ]f(...)
// [by keys]", with s its spec.
func (a *Agg) String(s *Spec) string {
	var b strings.Builder
	b.WriteString("=> ")
	if a.Name != "" {
		b.WriteString(a.Name)
		b.WriteString(" = ")
	}
	b.WriteString(a.Kind.Func.String())
	b.WriteByte('(')
	if a.Value >= 0 {
		b.WriteString(s.Fetches[a.Value].Expr.String())
	}
	if a.Kind.Func == agg.LHist {
		for _, v := range []int64{a.Kind.Min, a.Kind.Max, a.Kind.Step} {
			b.WriteString(", ")
			b.WriteString(strconv.FormatInt(v, 10))
		}
	}
	b.WriteByte(')')
	for i, k := range a.Keys {
		if i == 0 {
			b.WriteString(" by ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(k.String(s))
	}
	return b.String()
}

// String prints the key as the spec writes it.
func (k AggKey) String(s *Spec) string {
	switch k.Kind {
	case KeyPID:
		return "pid"
	case KeyTID:
		return "tid"
	case KeyExpr:
		return s.Fetches[k.Fetch].String()
	case KeyUstack:
		if k.Depth > 0 {
			return "ustack(" + strconv.Itoa(k.Depth) + ")"
		}
	}
	for w, kind := range keyWords {
		if kind == k.Kind {
			return w
		}
	}
	return "?"
}
