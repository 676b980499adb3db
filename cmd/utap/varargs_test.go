//go:build linux && amd64

package main

import (
	"testing"

	"github.com/utap/utap/probe"
)

// formatValues takes the arguments a printf format's conversions use,
// as ltrace shows them; a float takes no integer argument.
func TestFormatValues(t *testing.T) {
	pair := func(n uint64, s string, isStr bool) []probe.Value {
		str := probe.Value{Err: true}
		if isStr {
			str = probe.Value{Str: s, IsStr: true}
		}
		return []probe.Value{{Int: n}, str}
	}
	var pairs []probe.Value
	for _, p := range [][]probe.Value{
		pair(0xfffffffb, "", false), pair(0x1000, "str", true), pair(255, "", false), pair('A', "", false),
		pair(0, "", false), pair(0xffffffffffffffff, "", false), pair(3, "", false),
	} {
		pairs = append(pairs, p...)
	}
	got := formatValues("%d %s %x %c %s %ld %5.2f %*d%%", pairs)
	want := []probe.Value{
		{Int: 0xfffffffffffffffb, Signed: true, Format: probe.FormatDec},
		{Str: "str", IsStr: true},
		{Int: 255, Format: probe.FormatHex},
		{Int: 'A', Format: probe.FormatChar},
		{Null: true},
		{Int: 0xffffffffffffffff, Signed: true, Format: probe.FormatDec},
		{Err: true}, // the float
		// %*d: the width takes the 3, and nothing is left for the d.
	}
	if len(got) != len(want) {
		t.Fatalf("got %d values %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("value %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
