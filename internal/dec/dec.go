// Package dec writes integers in decimal straight into a line: the text
// writers format millions of numbers a second, and strconv's Append*
// formats into a buffer of its own and copies it (a tenth of a traced
// call's cost in the tracer).
package dec

const pairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// AppendUint appends u in decimal, as strconv.AppendUint(b, u, 10).
func AppendUint(b []byte, u uint64) []byte { return Append(b, u, false) }

// AppendInt appends v in decimal, as strconv.AppendInt(b, v, 10).
func AppendInt(b []byte, v int64) []byte { return Append(b, uint64(v), true) }

// Append appends u in decimal, as a signed number if signed: AppendInt
// and AppendUint in one call, not two (a trace's every number).
func Append(b []byte, u uint64, signed bool) []byte {
	if signed && int64(u) < 0 {
		b = append(b, '-')
		u = -u
	}
	// Most of a trace's numbers have eight digits or fewer: from the
	// left, in two groups of four, without counting the digits first
	// (its table lookup was a third of the time).
	if u < 1e4 {
		return append4(b, u)
	}
	if u < 1e8 {
		hi := u / 1e4
		lo := u - hi*1e4
		b = append4(b, hi)
		h, l := lo/100*2, lo%100*2
		return append(b, pairs[h], pairs[h+1], pairs[l], pairs[l+1])
	}
	return appendLong(b, u)
}

// AppendPad6 appends v < 1e6 as six digits, leading zeros kept: the
// fraction of a time stamp (%06d), the nanoseconds below a JSON time's
// millisecond.
func AppendPad6(b []byte, v uint64) []byte {
	a, c, e := v/10000*2, v/100%100*2, v%100*2
	return append(b, pairs[a], pairs[a+1], pairs[c], pairs[c+1], pairs[e], pairs[e+1])
}

// append4 appends v < 10000 without leading zeros.
func append4(b []byte, v uint64) []byte {
	switch {
	case v < 10:
		return append(b, byte('0'+v))
	case v < 100:
		return append(b, pairs[2*v], pairs[2*v+1])
	case v < 1000:
		h := v / 100
		r := (v - h*100) * 2
		return append(b, byte('0'+h), pairs[r], pairs[r+1])
	}
	h, r := v/100*2, v%100*2
	return append(b, pairs[h], pairs[h+1], pairs[r], pairs[r+1])
}

// appendLong appends u >= 1e8: what is above its last eight digits,
// then those.
func appendLong(b []byte, u uint64) []byte {
	hi := u / 1e8
	lo := u - hi*1e8
	b = AppendUint(b, hi)
	h := lo / 1e4
	l := lo - h*1e4
	a, c := h/100*2, h%100*2
	d, e := l/100*2, l%100*2
	return append(b, pairs[a], pairs[a+1], pairs[c], pairs[c+1], pairs[d], pairs[d+1], pairs[e], pairs[e+1])
}
