//go:build linux && amd64

package elfsym

import (
	"os"
	"testing"
)

// TestLibcAll resolves every libc function: thousands of sites, each
// checked, in well under a second.
func TestLibcAll(t *testing.T) {
	sites, err := Resolve(specs("libc:*"), Target{Exe: "/bin/ls"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("libc:* resolves to %d sites", len(sites))
	if len(sites) < 1000 {
		t.Errorf("libc:* resolved to %d sites", len(sites))
	}
	seen := map[uint64]bool{}
	for _, s := range sites {
		if seen[s.Addr] {
			t.Errorf("two sites at %#x (%s)", s.Addr, s.Func)
		}
		seen[s.Addr] = true
	}
}

func BenchmarkResolveLibcAll(b *testing.B) {
	for b.Loop() {
		if _, err := Resolve(specs("libc:*"), Target{Exe: "/bin/ls"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkListSelfMalloc(b *testing.B) {
	pid := os.Getpid()
	for b.Loop() {
		if _, err := List(Target{PID: pid}, "malloc"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkListLsMalloc(b *testing.B) {
	for b.Loop() {
		if _, err := List(Target{Exe: "/bin/ls"}, "malloc"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkResolveLibcAllCold parses libc (and its debug info) each time,
// as a fresh `utap` run does.
func BenchmarkResolveLibcAllCold(b *testing.B) {
	for b.Loop() {
		dropCache()
		if _, err := Resolve(specs("libc:*"), Target{Exe: "/bin/ls"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkListLsMallocCold(b *testing.B) {
	for b.Loop() {
		dropCache()
		if _, err := List(Target{Exe: "/bin/ls"}, "malloc"); err != nil {
			b.Fatal(err)
		}
	}
}
