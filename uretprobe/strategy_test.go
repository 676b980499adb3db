package uretprobe

import (
	"os"
	"testing"

	"github.com/utap/utap/probe"
)

func TestStrategy(t *testing.T) {
	for _, tc := range []struct {
		site  probe.Site
		shstk bool
		want  Method
	}{
		{probe.Site{Func: "work"}, false, Hijack},
		{probe.Site{Func: "main.work", GoFunc: true}, false, RetProbes},
		{probe.Site{Func: "work"}, true, RetProbes},
		{probe.Site{Func: "dlopen"}, false, RetProbes},
	} {
		if got := Strategy(&tc.site, tc.shstk); got != tc.want {
			t.Errorf("Strategy(%+v, %v) = %v, want %v", tc.site, tc.shstk, got, tc.want)
		}
	}
}

func TestShadowStackEnabled(t *testing.T) {
	status := "Name:\tx\nx86_Thread_features:\tshstk wrss\nx86_Thread_features_locked:\t\n"
	if !shstkIn([]byte(status)) {
		t.Error("shstk not found")
	}
	for _, s := range []string{
		"x86_Thread_features:\t\nx86_Thread_features_locked:\tshstk\n",
		"Name:\tx\n",
	} {
		if shstkIn([]byte(s)) {
			t.Errorf("shstk found in %q", s)
		}
	}
	if _, err := ShadowStackEnabled(os.Getpid()); err != nil {
		t.Error(err)
	}
	if _, err := ShadowStackEnabled(-1); err == nil {
		t.Error("no error for pid -1")
	}
}
