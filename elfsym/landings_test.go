//go:build linux && amd64

package elfsym

import (
	"os"
	"slices"
	"testing"

	"github.com/utap/utap/internal/fixture"
)

// glibc's __mempcpy_* jump to __memmove_*+3: those entries hold a landing
// in their first 5 bytes, found by the object-wide decoding.
func TestLandingsLibcMemmove(t *testing.T) {
	for _, fn := range []string{"__memmove_avx_unaligned_erms", "__memmove_sse2_unaligned_erms"} {
		sites, err := Resolve(specs("libc:"+fn), Target{Exe: "/bin/ls"})
		if err != nil {
			t.Skipf("%s: %v (libc without debug symbols?)", fn, err)
		}
		s := sites[0]
		land, err := ObjectLandings(s.Object)
		if err != nil {
			t.Fatal(err)
		}
		if a, ok := land.Inside(s.Addr, s.Addr+5); !ok {
			t.Errorf("%s at %#x: no landing in its first 5 bytes", fn, s.Addr)
		} else {
			t.Logf("%s at %#x: landing at +%d", fn, s.Addr, a-s.Addr)
		}
	}
}

// An assembly tail jump into f+3 is a landing; f's entry itself and
// main's first bytes hold none beyond their starts.
func TestLandingsFixture(t *testing.T) {
	bin := fixture.C(t, "pt_tailjump.S", "-g")
	land, err := ObjectLandings(bin)
	if err != nil {
		t.Fatal(err)
	}
	f := nmAddr(t, bin, "f", false)
	if a, ok := land.Inside(f, f+5); !ok || a != f+3 {
		t.Errorf("f at %#x: landing %#x, %v; want f+3", f, a, ok)
	}
	main := nmAddr(t, bin, "main", false)
	if a, ok := land.Inside(main, main+5); ok {
		t.Errorf("main at %#x: unexpected landing at %#x", main, a)
	}
}

// The set read back from the disk cache is the one computed.
func TestLandingsCache(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	o, err := openObject("/bin/ls")
	if err != nil {
		t.Fatal(err)
	}
	defer o.close()
	id := buildID(o.elf)
	if landCachePath(id) == "" {
		t.Skip("/bin/ls has no build id")
	}
	want, err := o.computeLandings()
	if err != nil {
		t.Fatal(err)
	}
	if readLandCache(id) != nil {
		t.Fatal("a cache before any was written")
	}
	writeLandCache(id, want)
	got := readLandCache(id)
	if got == nil || !slices.Equal(got.addrs, want.addrs) {
		t.Fatalf("read back %v landings, want %d", got, want.Len())
	}
}

// BenchmarkLandings decodes a whole object, as the first pad placed in it
// on a machine does (later ones read the cache: BenchmarkLandingsCached).
func BenchmarkLandings(b *testing.B) {
	for _, path := range landBenchObjects(b) {
		o, err := openObject(path)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(path, func(b *testing.B) {
			var n int
			for b.Loop() {
				l, err := o.computeLandings()
				if err != nil {
					b.Fatal(err)
				}
				n = l.Len()
			}
			b.ReportMetric(float64(n), "landings")
		})
		o.close()
	}
}

func BenchmarkLandingsCached(b *testing.B) {
	b.Setenv("XDG_CACHE_HOME", b.TempDir())
	for _, path := range landBenchObjects(b) {
		o, err := openObject(path)
		if err != nil {
			b.Fatal(err)
		}
		id := buildID(o.elf)
		l, err := o.computeLandings()
		if err != nil {
			b.Fatal(err)
		}
		writeLandCache(id, l)
		b.Run(path, func(b *testing.B) {
			for b.Loop() {
				if readLandCache(id) == nil {
					b.Fatal("no cache")
				}
			}
		})
		o.close()
	}
}

func landBenchObjects(b *testing.B) []string {
	out := []string{"/lib/x86_64-linux-gnu/libc.so.6"}
	// A large program: Debian's python3.11 (python3 on PATH may be a
	// shim script).
	for _, p := range []string{"/usr/bin/python3.11", "/usr/bin/python3"} {
		if _, err := os.Stat(p); err == nil {
			return append(out, p)
		}
	}
	return out
}
