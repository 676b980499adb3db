package probe

import "testing"

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
