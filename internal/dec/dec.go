// Package dec writes integers in decimal straight into a line: the text
// writers format millions of numbers a second, and strconv's Append*
// formats into a buffer of its own and copies it (a tenth of a traced
// call's cost in the tracer).
package dec

import "math/bits"

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

var pow10 = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// Digits is the number of decimal digits of u.
func Digits(u uint64) int {
	t := bits.Len64(u|1) * 1233 >> 12 // log10(2) ≈ 1233/4096
	if u < pow10[t] && t > 0 {
		return t
	}
	return t + 1
}

// AppendUint appends u in decimal, as strconv.AppendUint(b, u, 10).
func AppendUint(b []byte, u uint64) []byte {
	n := Digits(u)
	l := len(b)
	if cap(b)-l < n {
		b = append(b, make([]byte, n)...)
	} else {
		b = b[:l+n]
	}
	i := l + n
	// Four digits a step: the divisions of the remainder by 100 are off
	// the chain of divisions of u, which bounds the time.
	for u >= 10000 {
		q := u / 10000
		r := u - q*10000
		hi, lo := r/100*2, r%100*2
		i -= 4
		d := b[i : i+4 : i+4]
		d[0], d[1], d[2], d[3] = pairs[hi], pairs[hi+1], pairs[lo], pairs[lo+1]
		u = q
	}
	if u >= 100 {
		q := u / 100
		r := (u - q*100) * 2
		i -= 2
		b[i], b[i+1] = pairs[r], pairs[r+1]
		u = q
	}
	if u >= 10 {
		b[i-2], b[i-1] = pairs[2*u], pairs[2*u+1]
	} else {
		b[i-1] = byte('0' + u)
	}
	return b
}

// AppendInt appends v in decimal, as strconv.AppendInt(b, v, 10).
func AppendInt(b []byte, v int64) []byte {
	if v < 0 {
		return AppendUint(append(b, '-'), -uint64(v))
	}
	return AppendUint(b, uint64(v))
}
