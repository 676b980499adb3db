//go:build linux && amd64

package elfsym

import (
	"reflect"
	"testing"
)

// TestListObjectPattern lists libc's mall* functions ("OBJECT:GLOB"),
// sorted by address, with libc's parameter names when its debug info is
// installed (libc6-dbg).
func TestListObjectPattern(t *testing.T) {
	syms, err := List(Target{Exe: "/bin/ls"}, "libc:mall*")
	if err != nil {
		t.Fatal(err)
	}
	var malloc *Symbol
	for i, s := range syms {
		if i > 0 && s.Addr < syms[i-1].Addr {
			t.Errorf("not sorted: %+v after %+v", s, syms[i-1])
		}
		if s.Name == "malloc" {
			malloc = &syms[i]
		}
	}
	if malloc == nil {
		t.Fatalf("no malloc in %+v", syms)
	}
	o, err := openObject(malloc.Object)
	if err != nil {
		t.Fatal(err)
	}
	defer o.close()
	if err := o.symbols(); err != nil {
		t.Fatal(err)
	}
	if o.dwarfFile() == nil {
		t.Skip("no debug info for libc (install libc6-dbg)")
	}
	if !reflect.DeepEqual(malloc.Params, []string{"bytes"}) {
		t.Errorf("malloc params %q", malloc.Params)
	}
}

func BenchmarkResolveLibcMalloc(b *testing.B) {
	for b.Loop() {
		if _, err := Resolve(specs("libc:malloc"), Target{Exe: "/bin/ls"}); err != nil {
			b.Fatal(err)
		}
	}
}
