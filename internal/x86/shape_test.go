package x86

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// shapeProgram emits one program of a fixed shape whose MovRI immediates
// are vals: every class, low and high registers, branches both ways over
// them, a three-operand imul (RestArgs) and raw bytes.
func shapeProgram(a *Asm, vals []uint64) []Label {
	back, fwd, mid := a.NewLabel(), a.NewLabel(), a.NewLabel()
	a.Bind(back)
	for i, v := range vals {
		r := Reg(i % 16)
		if r == RSP {
			r = R11
		}
		a.MovRI(r, v)
		a.RR(ADD, RAX, r)
		if i == len(vals)/2 {
			a.Jcc(NE, fwd)
			a.Bind(mid)
		}
	}
	a.Store(Mem{Base: RBX, Disp: 0x40}, RAX)
	a.RI(IMUL, RCX, 0x40010)
	a.Raw(0x0f, 0x31)
	a.Jcc(E, back)
	a.Bind(fwd)
	a.Jmp(mid)
	return []Label{back, fwd, mid}
}

// classVal is a random value of v's MovRI class.
func classVal(r *rand.Rand, v uint64) uint64 {
	switch {
	case v <= 0xffffffff:
		return uint64(r.Uint32())
	case int64(v) < 0 && int64(v) >= -1<<31:
		return uint64(-1 - int64(r.Uint32()>>1))
	default:
		return 1<<32 + r.Uint64()>>2
	}
}

// TestShapeCache: a program whose shape was assembled before comes from
// the cache with its immediates written in, byte for byte what the
// assembler makes of it, labels at the same offsets.
func TestShapeCache(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	seeds := [][]uint64{
		{0, 1, 0xffffffff, 1 << 40, ^uint64(0), 1 << 31, uint64(0xffffffff80000000), 7, 1<<63 | 5},
		{0x7fffffff, 0, 0, 0},
		{1 << 32},
	}
	for _, seed := range seeds {
		for round := range 20 {
			vals := seed
			if round > 0 {
				vals = make([]uint64, len(seed))
				for i, v := range seed {
					vals[i] = classVal(r, v)
				}
			}
			a := NewAsm()
			labels := shapeProgram(a, vals)
			got, err := a.Assemble()
			if err != nil {
				t.Fatal(err)
			}
			var offs []int
			for _, l := range labels {
				offs = append(offs, a.Offset(l))
			}
			b := NewAsm()
			labels = shapeProgram(b, vals)
			want, _, err := b.assemble()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("vals %#x: cached\n% x\nassembled\n% x", vals, got, want)
			}
			for i, l := range labels {
				if b.Offset(l) != offs[i] {
					t.Fatalf("vals %#x: label %d at %d, assembled at %d", vals, i, offs[i], b.Offset(l))
				}
			}
		}
	}
	key := func(vals []uint64) string {
		a := NewAsm()
		shapeProgram(a, vals)
		return string(shapeKey(a, nil))
	}
	if key([]uint64{1}) == key([]uint64{1 << 40}) || key([]uint64{1}) == key([]uint64{^uint64(0)}) {
		t.Error("immediates of different classes make one shape")
	}
	if key([]uint64{1}) != key([]uint64{2}) {
		t.Error("immediates of one class make two shapes")
	}
}
