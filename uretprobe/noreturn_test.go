package uretprobe

import (
	"errors"
	"testing"

	"github.com/utap/utap/probe"
)

func TestNoReturnProbe(t *testing.T) {
	for fn, want := range map[string]bool{
		"setjmp": true, "_setjmp": true, "__sigsetjmp": true, "__GI___sigsetjmp": true,
		"__sigsetjmp@plt": true, "getcontext@@GLIBC_2.2.5": true, "swapcontext": true,
		"_start": true, "_dl_start_user": true, "__restore_rt": true,
		"longjmp": false, "vfork": false, "__sigjmp_save": false, "setjmp_helper": false, "main": false, "": false,
	} {
		if got := Unpaired(fn); got != want {
			t.Errorf("Unpaired(%q) = %v, want %v", fn, got, want)
		}
	}
	_, err := PlanReturn(&probe.Site{Func: "_setjmp", FuncSize: 7}, 0x1000, func() ([]byte, error) {
		return []byte{0x31, 0xf6, 0xe9, 0, 0, 0, 0}, nil
	}, Options{})
	if !errors.Is(err, ErrRefused) {
		t.Errorf("PlanReturn(_setjmp): %v, want %v", err, ErrRefused)
	}
}
