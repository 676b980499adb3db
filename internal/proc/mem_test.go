//go:build linux && amd64

package proc

import (
	"os"
	"runtime"
	"testing"
	"unsafe"
)

// ReadScattered and WritevAt on this process's own memory: the pieces
// land side by side, and read back from where they are.
func TestScatteredIO(t *testing.T) {
	m, err := OpenMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	dst := make([]byte, 16)
	at := uint64(uintptr(unsafe.Pointer(&dst[0])))
	if err := m.WritevAt([][]byte{[]byte("abc"), []byte("de"), {}, []byte("fgh")}, at+2); err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(dst)
	if string(dst[2:10]) != "abcdefgh" || dst[0] != 0 || dst[10] != 0 {
		t.Fatalf("wrote %q", dst)
	}
	a, b := make([]byte, 2), make([]byte, 3)
	if err := m.ReadScattered([][]byte{a, b}, []uint64{at + 2, at + 7}); err != nil {
		t.Fatal(err)
	}
	if string(a) != "ab" || string(b) != "fgh" {
		t.Fatalf("read %q %q", a, b)
	}
	if err := m.ReadScattered([][]byte{a}, []uint64{0}); err == nil {
		t.Fatal("a read at address 0 succeeded")
	}
}
