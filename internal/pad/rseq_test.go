//go:build linux && amd64

package pad

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// rseqCS is one descriptor as rseqDescriptors wrote it, found through
// the lea that loads it.
type rseqDesc struct {
	at                 int // its offset in the code
	version, flags     uint32
	start, post, abort uint64
}

// descriptors finds the critical sections' descriptors of code by their
// leas (lea rel32(%rip),%rcx), each followed by the store
// to the thread's rseq_cs.
func descriptors(code []byte) []rseqDesc {
	var out []rseqDesc
	lea := []byte{0x48, 0x8d, 0x0d}
	for i := 0; i+11 <= len(code); i++ {
		if !bytes.Equal(code[i:i+3], lea) || !bytes.Equal(code[i+7:i+11], []byte{0x48, 0x89, 0x48, rseqCS}) {
			continue
		}
		d := i + 7 + int(int32(binary.LittleEndian.Uint32(code[i+3:])))
		if d < 0 || d+csSize > len(code) {
			continue
		}
		out = append(out, rseqDesc{
			at:      d,
			version: binary.LittleEndian.Uint32(code[d:]), flags: binary.LittleEndian.Uint32(code[d+4:]),
			start: binary.LittleEndian.Uint64(code[d+8:]), post: binary.LittleEndian.Uint64(code[d+16:]),
			abort: binary.LittleEndian.Uint64(code[d+24:]),
		})
	}
	return out
}

// The pads' critical sections are what the kernel accepts (a descriptor
// it refuses kills the thread at its next preemption): version and flags
// 0, 32-byte aligned, the section inside the pad ending at its commit,
// the abort handler outside it and after glibc's signature. A counting
// return pad has two (the sum, the bucket), a counting entry that
// hijacks its return one (its count); a site past TallyCPUSites none.
func TestRseqDescriptors(t *testing.T) {
	const at, ret = 0x7f0000100000, 0x7f0000100800
	h := &Hijack{Shadow: 0x7f0000200000, Depth: 16, Return: ret, Ring: 0x7f0000300000}
	spec := func(id uint32) Spec {
		return Spec{ID: id, Ring: h.Ring, Records: 1024, Count: true, Displaced: func(uint64) ([]byte, error) { return []byte{0xc3}, nil }}
	}
	check := func(name string, code []byte, base uint64, want int) {
		t.Helper()
		cs := descriptors(code)
		if len(cs) != want {
			t.Fatalf("%s: %d sections, want %d", name, len(cs), want)
		}
		for _, c := range cs {
			end := base + uint64(len(code))
			switch {
			case c.version != 0 || c.flags != 0:
				t.Errorf("%s: version %d flags %d", name, c.version, c.flags)
			case (base+uint64(c.at))%csSize != 0:
				t.Errorf("%s: descriptor at %#x, not 32-byte aligned", name, base+uint64(c.at))
			case c.start < base || c.start+c.post > end || c.post == 0 || c.post > 32:
				t.Errorf("%s: section [%#x, +%d) outside the pad [%#x, %#x)", name, c.start, c.post, base, end)
			case c.abort >= c.start && c.abort < c.start+c.post, c.abort < base+4 || c.abort >= end:
				t.Errorf("%s: abort %#x in the section or outside the pad", name, c.abort)
			case !bytes.Equal(code[c.start-base:c.start-base+3], []byte{0x8b, 0x48, rseqCPU}):
				t.Errorf("%s: the section starts % x, not with the CPU's load", name, code[c.start-base:c.start-base+3])
			case binary.LittleEndian.Uint32(code[c.abort-base-4:]) != RseqSig:
				t.Errorf("%s: no signature before the abort handler: % x", name, code[c.abort-base-4:c.abort-base])
			}
		}
	}
	for _, c := range []struct {
		id   uint32
		want int
	}{{2, 2}, {TallyCPUSites + 1, 0}} {
		code, _, err := BuildReturn(spec(c.id), h)
		if err != nil {
			t.Fatal(err)
		}
		check("return", code, ret, c.want)
		e := spec(c.id - 1)
		e.Hijack = h
		code, _, err = Build(e, at)
		if err != nil {
			t.Fatal(err)
		}
		check("entry", code, at, c.want/2)
	}
}

func TestCPUCount(t *testing.T) {
	for in, want := range map[string]int{"0-1\n": 2, "0": 1, "0-3,8-11": 12, "0,2": 3, "": 0, "junk": 0} {
		if got := cpuCount(in); got != want {
			t.Errorf("cpuCount(%q) = %d, want %d", in, got, want)
		}
	}
}
