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
// shape's code once and writes the numbers into a copy.

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

// shapeKey is a's program's shape: every insn's fields, but for the
// immediates of the MovRIs (a.imms), which only their class stands for;
// written into k (a buffer of keyPool: a key is some 7 KB, and the
// cache looks it up without a string of its own).
func shapeKey(a *Asm, k []byte) []byte {
	le := binary.LittleEndian
	k = k[:0]
	addr := func(x *opnd) {
		k = append(k, byte(x.typ))
		if x.typ != obj.TYPE_NONE {
			k = le.AppendUint16(k, uint16(x.reg))
			k = le.AppendUint64(k, uint64(x.off))
		}
	}
	hole := 0
	for i := range a.c.ins {
		in := &a.c.ins[i]
		k = le.AppendUint16(k, uint16(in.as))
		k = le.AppendUint32(k, uint32(in.target))
		k = le.AppendUint32(k, uint32(in.bind))
		if hole < len(a.imms) && a.imms[hole] == i {
			hole++
			c, _, _ := immClass(in.as, in.from.off, in.to.reg)
			k = append(k, 'I', c)
			addr(&in.to)
			continue
		}
		addr(&in.from)
		addr(&in.to)
		addr(&in.rest)
	}
	return le.AppendUint32(k, uint32(len(a.bound)))
}

// keyPool keeps shape keys' buffers.
var keyPool = sync.Pool{New: func() any { return new([]byte) }}

// code is the code of a's program, of shape key, its immediates written
// in and a's labels placed; false: the shape is not known.
func (c *shapeCache) code(a *Asm, key []byte) ([]byte, bool) {
	c.Lock()
	s := c.m[string(key)] // no string made for a lookup
	c.Unlock()
	if s == nil || s.code == nil || len(s.holes) != len(a.imms) || len(s.labels) != len(a.bound) {
		return nil, false
	}
	code := append([]byte(nil), s.code...)
	for i, h := range s.holes {
		v := uint64(a.c.ins[a.imms[i]].from.off)
		if h.width == 4 {
			binary.LittleEndian.PutUint32(code[h.end-4:], uint32(v))
		} else {
			binary.LittleEndian.PutUint64(code[h.end-8:], v)
		}
	}
	a.pcs = s.labels
	return code, true
}

// keep files the code just assembled for a (pcs: each insn's offset)
// under its shape, with its holes: each MovRI's immediate as its last
// bytes, the instruction its class's length; a shape whose code is
// otherwise is kept as not to be patched.
func (c *shapeCache) keep(a *Asm, key []byte, code []byte, pcs []int64) {
	s := &shape{code: code, labels: a.pcs}
	for _, i := range a.imms {
		in := &a.c.ins[i]
		_, width, length := immClass(in.as, in.from.off, in.to.reg)
		end := len(code)
		if i+1 < len(pcs) {
			end = int(pcs[i+1])
		}
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(in.from.off))
		if end-int(pcs[i]) != length || end > len(code) || string(code[end-width:end]) != string(b[:width]) {
			s = &shape{}
			break
		}
		s.holes = append(s.holes, hole{end, width})
	}
	c.Lock()
	defer c.Unlock()
	if _, ok := c.m[string(key)]; ok || c.bytes+len(key)+len(code) > maxShapeBytes {
		return
	}
	if s.code != nil {
		s.code = append([]byte(nil), code...)
	}
	c.m[string(key)] = s
	c.bytes += len(key) + len(code)
}
