package probe

import (
	"strings"
	"testing"
)

func TestBindPrototypeDefaults(t *testing.T) {
	proto := &Prototype{
		Params: []ProtoType{{Kind: ProtoString, Size: 8}, {Kind: ProtoInt, Size: 4, Signed: true}, {Kind: ProtoPointer, Size: 8}},
		Ret:    ProtoType{Kind: ProtoInt, Size: 4, Signed: true},
	}
	entry := Site{Spec: &Spec{Text: "open", Symbol: "open"}, Func: "open", Params: []string{"file", "oflag"}, Proto: proto}
	if err := entry.Bind(); err != nil {
		t.Fatal(err)
	}
	want := []string{"str(arg1)", "((s32)arg2)", "arg3"}
	if len(entry.Fetches) != len(want) {
		t.Fatalf("fetches %v", entry.Fetches)
	}
	for i, f := range entry.Fetches {
		if f.Expr.String() != want[i] {
			t.Errorf("fetch %d = %s, want %s", i, f.Expr, want[i])
		}
	}
	if entry.Fetches[0].Text != "file" || entry.Fetches[2].Text != "arg3" || entry.Fetches[2].Format != FormatPointer {
		t.Errorf("texts/formats: %+v", entry.Fetches)
	}
	ret := Site{Spec: &Spec{Text: "return:open", Symbol: "open", Kind: Return}, Func: "open", Proto: proto}
	if err := ret.Bind(); err != nil {
		t.Fatal(err)
	}
	if len(ret.Fetches) != 1 || ret.Fetches[0].Expr.Type() != S32 || ret.Fetches[0].Expr.String() != "((s32)ret)" {
		t.Errorf("return fetches %v", ret.Fetches)
	}
	// No prototype: ltrace's default, four longs of unknown type.
	bare := Site{Spec: &Spec{Text: "f", Symbol: "f"}, Func: "f"}
	if err := bare.Bind(); err != nil || len(bare.Fetches) != 4 || bare.Fetches[3].Format != FormatGuess {
		t.Errorf("default: %v %v", bare.Fetches, err)
	}
	// Explicit fetches, offsets and Go functions keep theirs.
	for _, s := range []Site{
		{Spec: &Spec{Text: "f+4", Symbol: "f", Offset: 4}, Proto: proto},
		{Spec: &Spec{Text: "main.f", Symbol: "main.f"}, GoFunc: true, ABI: ABIGoRegs},
	} {
		if err := s.Bind(); err != nil || len(s.Fetches) != 0 {
			t.Errorf("%s: fetches %v %v", s.Spec.Text, s.Fetches, err)
		}
	}
	void := Site{Spec: &Spec{Text: "return:free", Symbol: "free", Kind: Return}, Proto: &Prototype{Ret: ProtoType{Kind: ProtoVoid}}}
	if err := void.Bind(); err != nil || len(void.Fetches) != 1 || void.Fetches[0].Format != FormatVoid {
		t.Errorf("void: %v %v", void.Fetches, err)
	}
}

// TestBindOutputArgs: ltrace.conf's long read(int, +string[retval],
// ulong): a twinned entry shows the fd; its return twin the return value,
// then the buffer from the entry's pointer with the return value's length
// (none when it is not positive) and the count from the entry's register.
// Without a twin the entry shows all three, as before.
func TestBindOutputArgs(t *testing.T) {
	proto := &Prototype{
		Params: []ProtoType{{Kind: ProtoInt, Size: 4, Signed: true}, {Kind: ProtoString, Size: 8, Out: true, LenRet: true},
			{Kind: ProtoInt, Size: 8}},
		Ret: ProtoType{Kind: ProtoInt, Size: 8, Signed: true},
	}
	bind := func(kind Kind, twinned bool) []string {
		s := Site{Spec: &Spec{Symbol: "read", Kind: kind, Twinned: twinned}, Func: "read", Proto: proto}
		if err := s.Bind(); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range s.Fetches {
			out = append(out, f.Expr.String())
		}
		return out
	}
	for _, c := range []struct {
		kind    Kind
		twinned bool
		want    string
	}{
		{Entry, true, "((s32)arg1)"},
		{Return, true, "((s64)ret) buf(entry(arg2), ((ret > 0) ? ret : 0)) entry(arg3)"},
		{Entry, false, "((s32)arg1) str(arg2) arg3"},
		{Return, false, "((s64)ret)"},
	} {
		if got := strings.Join(bind(c.kind, c.twinned), " "); got != c.want {
			t.Errorf("kind %v twinned %v: %s, want %s", c.kind, c.twinned, got, c.want)
		}
	}
	s := Site{Spec: &Spec{Symbol: "read", Kind: Return, Twinned: true}, Func: "read", Proto: proto}
	if err := s.Bind(); err != nil {
		t.Fatal(err)
	}
	buf := s.Fetches[1].Expr.(*StrOf)
	if buf.Len == nil || buf.Len.String() != "((ret > 0) ? ret : 0)" || !s.UsesEntryArgs() {
		t.Errorf("buffer length %v, uses entry args %v", buf.Len, s.UsesEntryArgs())
	}
}
