//go:build linux && amd64

package elfsym

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/utap/utap/probe"
)

func TestParseLtraceConf(t *testing.T) {
	conf := `; comment
typedef sigset_t = bitvec(ulong);
typedef signum = enum(SIGHUP=1, SIGINT=2);
int open(string,int,octal);		; WARNING: 3rd argument may not be there
addr malloc(ulong);
file fopen(string, string);
void free(addr);
int sigaddset(+sigset_t*, signum);
double atof(string);
int pow2(double, int);
bool(int) isok(hide(int), hex(uint), char*);
int printf(format);
addr memcpy(addr,string(array(char, arg3)*),ulong);
int strncmp(string[arg3], string[8], ulong);
long read(int, +string[retval], ulong);
addr fgets(+string, int, file);
`
	m, err := parseLtraceConf(strings.NewReader(conf))
	if err != nil {
		t.Fatal(err)
	}
	i32 := probe.ProtoType{Kind: probe.ProtoInt, Size: 4, Signed: true}
	str := probe.ProtoType{Kind: probe.ProtoString, Size: 8}
	ptr := probe.ProtoType{Kind: probe.ProtoPointer, Size: 8}
	hex := probe.ProtoType{Kind: probe.ProtoHex, Size: 8}
	for name, want := range map[string]probe.Prototype{
		"open":      {Params: []probe.ProtoType{str, i32, {Kind: probe.ProtoOctal, Size: 4}}, Ret: i32},
		"malloc":    {Params: []probe.ProtoType{{Kind: probe.ProtoInt, Size: 8}}, Ret: ptr},
		"fopen":     {Params: []probe.ProtoType{str, str}, Ret: ptr},
		"free":      {Params: []probe.ProtoType{ptr}, Ret: probe.ProtoType{Kind: probe.ProtoVoid}},
		"sigaddset": {Params: []probe.ProtoType{{Kind: probe.ProtoBitvecPtr, Size: 8, Out: true}, {Kind: probe.ProtoInt, Size: 4, Signed: true, Enum: probe.Enum{1: "SIGHUP", 2: "SIGINT"}}}, Ret: i32},
		"atof":      {Params: []probe.ProtoType{str}, Ret: hex},
		"pow2":      {More: true, Ret: i32},
		"isok":      {Params: []probe.ProtoType{{Kind: probe.ProtoHex, Size: 4}, ptr}, Ret: probe.ProtoType{Kind: probe.ProtoBool, Size: 4, Signed: true}},
		"printf":    {Params: []probe.ProtoType{{Kind: probe.ProtoString, Size: 8, Format: true}}, Ret: i32},
		"memcpy":    {Params: []probe.ProtoType{ptr, {Kind: probe.ProtoString, Size: 8, LenArg: 3}, {Kind: probe.ProtoInt, Size: 8}}, Ret: ptr},
		"strncmp": {Params: []probe.ProtoType{{Kind: probe.ProtoString, Size: 8, LenArg: 3, CStr: true}, {Kind: probe.ProtoString, Size: 8, LenConst: 8, CStr: true},
			{Kind: probe.ProtoInt, Size: 8}}, Ret: i32},
		"read": {Params: []probe.ProtoType{i32, {Kind: probe.ProtoString, Size: 8, Out: true, LenRet: true, CStr: true}, {Kind: probe.ProtoInt, Size: 8}},
			Ret: probe.ProtoType{Kind: probe.ProtoInt, Size: 8, Signed: true}},
		"fgets": {Params: []probe.ProtoType{{Kind: probe.ProtoString, Size: 8, Out: true}, i32, ptr}, Ret: ptr},
	} {
		got := m[name]
		if got == nil {
			t.Errorf("%s: no prototype", name)
			continue
		}
		want.Source = "ltrace.conf"
		if !equalProto(*got, want) {
			t.Errorf("%s = %+v, want %+v", name, *got, want)
		}
	}
}

func equalProto(a, b probe.Prototype) bool {
	return reflect.DeepEqual(a, b)
}

// The installed file parses, and has the prototypes the CLI examples use.
func TestSystemLtraceConf(t *testing.T) {
	f, err := os.Open(ltraceSysConf)
	if err != nil {
		t.Skipf("no %s (ltrace is not installed): %v", ltraceSysConf, err)
	}
	defer f.Close()
	m, err := parseLtraceConf(f)
	if err != nil {
		t.Errorf("parse: %v", err)
	}
	for _, fn := range []string{"malloc", "open", "fopen", "strlen"} {
		if m[fn] == nil {
			t.Errorf("no prototype for %s", fn)
		}
	}
}
