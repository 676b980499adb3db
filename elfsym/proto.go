//go:build linux && amd64

package elfsym

import (
	"debug/dwarf"
	"strings"

	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/utap/utap/probe"
)

// protoAt returns the prototype of the function name starting at addr:
// from the object's DWARF (or its separate debug file), else from
// ltrace's prototype files; nil when neither knows it (Bind then uses
// ltrace's default). A file's prototype that says what a type cannot
// comes first (ltraceKnowsMore: read's `+string[retval]` against DWARF's
// `void *`), so a libc with its debug file installed prints such calls
// as one without, and as ltrace, whose files come before DWARF; else
// DWARF's, exact where the files guess (open's third argument, there
// only when O_CREAT is).
func (o *object) protoAt(fn fsym) *probe.Prototype {
	name := strings.TrimSuffix(fn.name, "@plt")
	if p := userProto(name); p != nil {
		return p // ltrace -F: the user's file says it
	}
	conf := ltraceProto(o.path, name)
	if conf != nil && ltraceKnowsMore(conf) {
		return conf
	}
	// An IFUNC's DWARF at its address is its resolver's, not the
	// function's; a PLT stub has none.
	if !fn.ifunc && !fn.plt && o.paramsAt(fn.addr) != nil {
		t := o.params
		t.mu.Lock()
		var p *probe.Prototype
		if sig, ok := t.sigs[fn.addr]; ok {
			p = t.prototype(sig)
		}
		t.mu.Unlock()
		if p != nil {
			return p
		}
	}
	return conf
}

// ltraceKnowsMore says whether p, a prototype file's, says what no C type
// does: an output argument (filled by the call, read at its return) or a
// string's length (an argument, the return value, a constant).
func ltraceKnowsMore(p *probe.Prototype) bool {
	for _, t := range append([]probe.ProtoType{p.Ret}, p.Params...) {
		if t.Out || t.LenRet || t.LenArg > 0 || t.LenConst > 0 {
			return true
		}
	}
	return false
}

// prototype turns a signature's DWARF types into a Prototype; nil when a
// type cannot be read. Called with t.mu held (the type cache is shared).
func (t *paramTable) prototype(sig dwarfSig) *probe.Prototype {
	if t.typeCache == nil {
		t.typeCache = map[dwarf.Offset]godwarf.Type{}
	}
	p := &probe.Prototype{Source: "dwarf", More: sig.variadic}
	for _, off := range sig.params {
		if off == 0 {
			return nil
		}
		typ, err := godwarf.ReadType(t.data, 0, off, t.typeCache)
		if err != nil {
			return nil
		}
		pt, ok := protoType(typ)
		if !ok || pt.Kind == probe.ProtoVoid {
			// A float or a struct by value takes no integer register, or
			// several: the arguments after it cannot be placed.
			p.More = true
			break
		}
		p.Params = append(p.Params, pt)
	}
	p.Ret = probe.ProtoType{Kind: probe.ProtoVoid}
	if sig.ret != 0 {
		typ, err := godwarf.ReadType(t.data, 0, sig.ret, t.typeCache)
		if err != nil {
			return nil
		}
		if p.Ret, _ = protoType(typ); p.Ret.Kind == probe.ProtoVoid {
			// A float or struct return is not in rax: show rax raw.
			p.Ret = probe.ProtoType{Kind: probe.ProtoHex, Size: 8}
		}
	}
	return p
}

// protoType maps a C type to how utap reads and shows it. ok is false for
// a type not passed in one integer register (floats, structs by value).
func protoType(t godwarf.Type) (probe.ProtoType, bool) {
	t = resolveTypedefs(t)
	size := uint8(0)
	if t != nil {
		size = uint8(t.Size())
	}
	switch x := t.(type) {
	case nil, *godwarf.VoidType:
		return probe.ProtoType{Kind: probe.ProtoVoid}, true
	case *godwarf.PtrType:
		if isChar(resolveTypedefs(x.Type)) {
			return probe.ProtoType{Kind: probe.ProtoString, Size: 8}, true
		}
		return probe.ProtoType{Kind: probe.ProtoPointer, Size: 8}, true
	case *godwarf.CharType, *godwarf.UcharType:
		return probe.ProtoType{Kind: probe.ProtoChar, Size: 1}, true
	case *godwarf.IntType:
		return probe.ProtoType{Kind: probe.ProtoInt, Size: size, Signed: true}, true
	case *godwarf.UintType:
		return probe.ProtoType{Kind: probe.ProtoInt, Size: size}, true
	case *godwarf.BoolType:
		return probe.ProtoType{Kind: probe.ProtoBool, Size: size}, true
	case *godwarf.AddrType:
		return probe.ProtoType{Kind: probe.ProtoHex, Size: 8}, true
	case *godwarf.EnumType:
		signed := false
		names := probe.Enum{}
		for _, v := range x.Val {
			signed = signed || v.Val < 0
			if _, dup := names[v.Val]; !dup {
				names[v.Val] = v.Name // the first name of a value, as gdb shows it
			}
		}
		return probe.ProtoType{Kind: probe.ProtoInt, Size: size, Signed: signed, Enum: names}, true
	}
	return probe.ProtoType{}, false
}

func resolveTypedefs(t godwarf.Type) godwarf.Type {
	for range 32 {
		switch x := t.(type) {
		case *godwarf.TypedefType:
			t = x.Type
		case *godwarf.QualType:
			t = x.Type
		default:
			return t
		}
	}
	return t
}

// isChar: char*, const char*, unsigned char* are strings, as ltrace's
// string; a pointer to int8_t too, since DWARF cannot tell them apart.
func isChar(t godwarf.Type) bool {
	switch x := t.(type) {
	case *godwarf.CharType, *godwarf.UcharType:
		return true
	case *godwarf.IntType, *godwarf.UintType:
		return x.Size() == 1 && strings.Contains(x.Common().Name, "char")
	}
	return false
}
