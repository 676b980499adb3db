//go:build linux && amd64

package elfsym

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/probe"
)

func protoOf(t *testing.T, target Target, text string) *probe.Prototype {
	t.Helper()
	spec, err := probe.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	sites, err := Resolve([]*probe.Spec{spec}, target)
	if err != nil {
		t.Fatal(err)
	}
	return sites[0].Proto
}

func TestDWARFPrototypes(t *testing.T) {
	bin := fixture.C(t, "proto_types.c")
	i32 := probe.ProtoType{Kind: probe.ProtoInt, Size: 4, Signed: true}
	str := probe.ProtoType{Kind: probe.ProtoString, Size: 8}
	ptr := probe.ProtoType{Kind: probe.ProtoPointer, Size: 8}
	for fn, want := range map[string]probe.Prototype{
		"p_int":  {Params: []probe.ProtoType{i32, {Kind: probe.ProtoInt, Size: 4}, {Kind: probe.ProtoInt, Size: 8, Signed: true}}, Ret: i32},
		"p_str":  {Params: []probe.ProtoType{str, str}, Ret: i32},
		"p_bool": {Params: []probe.ProtoType{{Kind: probe.ProtoBool, Size: 1}, {Kind: probe.ProtoInt, Size: 4, Enum: probe.Enum{0: "RED", 1: "GREEN", 2: "BLUE"}}}, Ret: probe.ProtoType{Kind: probe.ProtoBool, Size: 1}},
		"p_ptr":  {Params: []probe.ProtoType{ptr}, Ret: ptr},
	} {
		got := protoOf(t, Target{Exe: bin}, fn)
		want.Source = "dwarf"
		if got == nil || !equalProto(*got, want) {
			t.Errorf("%s: %+v, want %+v", fn, got, want)
		}
	}
}

// libc's prototypes come from libc6-dbg's separate debug file (found by
// build-id), else from ltrace.conf.
func TestLibcPrototypes(t *testing.T) {
	bin := fixture.C(t, "proto_types.c")
	if m, _ := filepath.Glob("/usr/lib/debug/.build-id/*/*.debug"); len(m) == 0 {
		if _, err := os.Stat(ltraceSysConf); err != nil {
			t.Skip("neither libc6-dbg nor ltrace installed: no prototypes for libc")
		}
	}
	for _, tc := range []struct {
		fn   string
		ret  probe.ProtoKind
		arg1 probe.ProtoKind
	}{
		{"libc:malloc", probe.ProtoPointer, probe.ProtoInt},
		{"libc:open", probe.ProtoInt, probe.ProtoString},
		{"libc:fopen", probe.ProtoPointer, probe.ProtoString},
	} {
		p := protoOf(t, Target{Exe: bin}, tc.fn)
		if p == nil || len(p.Params) == 0 || p.Ret.Kind != tc.ret || p.Params[0].Kind != tc.arg1 {
			t.Errorf("%s: %+v", tc.fn, p)
			continue
		}
		if tc.fn == "libc:open" && (p.Ret.Size != 4 || !p.Ret.Signed) {
			t.Errorf("open returns %+v, want a signed 32-bit int", p.Ret)
		}
		t.Logf("%s: %+v from %s", tc.fn, *p, p.Source)
	}
}

// A function both ltrace's files and DWARF know takes the files'
// prototype when it says what a type cannot (an output argument, a
// string's length), else DWARF's.
func TestLtraceConfBeforeDWARF(t *testing.T) {
	bin := fixture.C(t, "proto_types.c")
	conf := filepath.Join(t.TempDir(), "ltrace.conf")
	if err := os.WriteFile(conf, []byte("int p_str(+string[retval], string);\nint p_int(hex(int), hex(uint), long);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := ltraceSysConf
	ltraceSysConf = conf
	t.Cleanup(func() { ltraceSysConf = old })

	p := protoOf(t, Target{Exe: bin}, "p_str")
	if p == nil || p.Source != "ltrace.conf" || len(p.Params) != 2 || !p.Params[0].Out || !p.Params[0].LenRet {
		t.Errorf("p_str: %+v, want ltrace.conf's (an output string, its length the return value)", p)
	}
	if p := protoOf(t, Target{Exe: bin}, "p_int"); p == nil || p.Source != "dwarf" {
		t.Errorf("p_int: %+v, want DWARF's", p)
	}
}
