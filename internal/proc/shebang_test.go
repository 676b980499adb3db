package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestExecutable follows #! lines as the kernel does, and env to the
// program it runs from PATH.
func TestExecutable(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	direct := write("direct.sh", "#!"+sh+" -e\necho hi\n")
	viaEnv := write("env.sh", "#!/usr/bin/env sh\necho hi\n")
	nested := write("nested", "#!"+direct+"\n")
	loop := write("loop", "#!"+filepath.Join(dir, "loop")+"\n")
	for _, c := range []struct{ path, want string }{
		{sh, sh},
		{direct, sh},
		{viaEnv, sh},
		{nested, sh},
	} {
		if got, err := Executable(c.path); err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", filepath.Base(c.path), got, err, c.want)
		}
	}
	if _, err := Executable(loop); err == nil {
		t.Errorf("a script that is its own interpreter: no error")
	}
}
