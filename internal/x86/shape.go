package x86

import (
	"encoding/binary"
	"sync"

	"github.com/twitchyliquid64/golang-asm/obj"
	gx "github.com/twitchyliquid64/golang-asm/obj/x86"
)

// Assembling is most of what placing a pad costs (golang-asm's passes
// over the program: ≈0.2 ms a pad, 100 ms for the 500 system call pads of
// one libc), and a trace builds the same few shapes again and again: the
// pads of one libc in every process image a -f trace sees, the sites of
// one system call. A shape is a program but for the numbers MovRI moves
// into registers (addresses, ids, call numbers); Assemble keeps each
// shape's code once and writes the numbers into it.

// shapeCache maps a program's shape (shapeKey) to its code.
type shapeCache struct {
	sync.Mutex
	m     map[string]*shape
	bytes int
}

var shapes = shapeCache{m: map[string]*shape{}}

// maxShapeBytes bounds the cache: keys and code together.
const maxShapeBytes = 64 << 20

// shape is one shape's code and where its holes are: the immediates of
// its MovRIs (nil code: the shape's encoding was not as expected, it is
// assembled every time).
type shape struct {
	code   []byte
	holes  []hole
	labels []int64 // each label's offset
}

// hole is where a MovRI's immediate is in the code: its last width bytes
// before end.
type hole struct{ end, width int }

// immClass is how MovRI encodes v, the class the shape keeps instead of
// v: mov r32, imm32 (the assembler's form for a 32-bit unsigned constant
// with AMOVL), mov r/m64, simm32 or movabs (AMOVQ), and the immediate's
// width and the instruction's length.
func immClass(as obj.As, v int64, r int16) (class byte, width, length int) {
	rex := 0
	if r >= gx.REG_R8 {
		rex = 1
	}
	switch {
	case as == gx.AMOVL:
		return 1, 4, 5 + rex
	case v >= -1<<31 && v < 1<<31:
		return 2, 4, 7
	default:
		return 3, 8, 10
	}
}

// shapeKey is the program's shape: every instruction's fields but the
// immediates of the MovRIs (imms), which only their class stands for;
// branch targets by label number.
func shapeKey(a *Asm) string {
	label := make(map[*obj.Prog]int, len(a.labels))
	for i, l := range a.labels {
		label[l] = i
	}
	k := make([]byte, 0, 4096)
	hole := 0
	addr := func(x *obj.Addr) {
		k = binary.AppendVarint(k, int64(x.Type))
		k = binary.AppendVarint(k, int64(x.Reg))
		k = binary.AppendVarint(k, int64(x.Index))
		k = binary.AppendVarint(k, int64(x.Scale))
		k = binary.AppendVarint(k, int64(x.Name))
		if x.Type == obj.TYPE_BRANCH {
			k = binary.AppendVarint(k, int64(label[x.Target()]))
		} else {
			k = binary.AppendVarint(k, x.Offset)
		}
	}
	for p := a.c.first; p != nil; p = p.Link {
		if i, ok := label[p]; ok {
			k = append(k, 'L')
			k = binary.AppendVarint(k, int64(i))
			continue
		}
		k = binary.AppendVarint(k, int64(p.As))
		k = binary.AppendVarint(k, int64(p.Scond))
		k = binary.AppendVarint(k, int64(p.Reg))
		if hole < len(a.imms) && a.imms[hole] == p {
			hole++
			c, _, _ := immClass(p.As, p.From.Offset, p.To.Reg)
			k = append(k, 'I', c)
			k = binary.AppendVarint(k, int64(p.To.Reg))
		} else {
			addr(&p.From)
			addr(&p.To)
		}
		for i := range p.RestArgs {
			addr(&p.RestArgs[i])
		}
		k = append(k, ';')
	}
	return string(k)
}

// code is the code of a's program, of shape key, its immediates written
// in and a's labels placed; false: the shape is not known.
func (c *shapeCache) code(a *Asm, key string) ([]byte, bool) {
	c.Lock()
	s := c.m[key]
	c.Unlock()
	if s == nil || s.code == nil || len(s.holes) != len(a.imms) || len(s.labels) != len(a.labels) {
		return nil, false
	}
	code := append([]byte(nil), s.code...)
	for i, h := range s.holes {
		v := uint64(a.imms[i].From.Offset)
		if h.width == 4 {
			binary.LittleEndian.PutUint32(code[h.end-4:], uint32(v))
		} else {
			binary.LittleEndian.PutUint64(code[h.end-8:], v)
		}
	}
	for i, l := range a.labels {
		l.Pc = s.labels[i]
	}
	return code, true
}

// keep files the code just assembled for a under its shape, with its
// holes: each MovRI's immediate as its last bytes, the instruction its
// class's length; a shape whose code is otherwise is kept as not to be
// patched.
func (c *shapeCache) keep(a *Asm, key string, code []byte) {
	s := &shape{code: code, labels: make([]int64, len(a.labels))}
	for i, l := range a.labels {
		s.labels[i] = l.Pc
	}
	for _, p := range a.imms {
		_, width, length := immClass(p.As, p.From.Offset, p.To.Reg)
		end := len(code)
		if p.Link != nil {
			end = int(p.Link.Pc)
		}
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(p.From.Offset))
		if end-int(p.Pc) != length || end > len(code) || string(code[end-width:end]) != string(b[:width]) {
			s = &shape{}
			break
		}
		s.holes = append(s.holes, hole{end, width})
	}
	c.Lock()
	defer c.Unlock()
	if _, ok := c.m[key]; ok || c.bytes+len(key)+len(code) > maxShapeBytes {
		return
	}
	if s.code != nil {
		s.code = append([]byte(nil), code...)
	}
	c.m[key] = s
	c.bytes += len(key) + len(code)
}
