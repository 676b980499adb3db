package x86

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

func hexBytes(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRets(t *testing.T) {
	// push rbp; endbr64; je +1; ret; rep ret; ret 8; 66 ret (16-bit); lret; nopw
	code := hexBytes(t, "55 f3 0f 1e fa 74 01 c3 f3 c3 c2 08 00 66 c3 cb 66 0f 1f 44 00 00")
	rets, err := Rets(code)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(rets) != "[7 8 10]" {
		t.Fatalf("Rets = %v, want [7 8 10]", rets)
	}
	if n, err := Len(code[1:]); n != 4 || err != nil {
		t.Fatalf("Len(endbr64) = %d, %v", n, err)
	}
}
