package x86

// Len returns the length of the instruction at the start of code (which
// should hold up to 15 bytes). It is used to walk instruction boundaries
// forward from a function's start: a probe is only ever placed at one.
func Len(code []byte) (int, error) {
	inst, err := Decode(code)
	if err != nil {
		return 0, err
	}
	return inst.Len, nil
}
