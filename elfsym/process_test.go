//go:build linux && amd64

package elfsym

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/proc"
	"github.com/utap/utap/probe"
)

// startSleeper runs bin with argument "sleep" and waits for its first
// line of output, by which time the loader has mapped every library.
func startSleeper(t *testing.T, bin string) int {
	t.Helper()
	cmd := exec.Command(bin, "sleep")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	return cmd.Process.Pid
}

// checkRuntimeBytes checks that the process holds the site's
// instruction at link-time address + load bias.
func checkRuntimeBytes(t *testing.T, pid int, maps []proc.Mapping, s probe.Site) {
	t.Helper()
	bias, err := Bias(maps, s.Object)
	if err != nil {
		t.Fatalf("Bias(%s): %v", s.Object, err)
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	b := make([]byte, len(s.Insn))
	if _, err := mem.ReadAt(b, int64(s.Addr+bias)); err != nil {
		t.Fatalf("reading %s at %#x: %v", s.Func, s.Addr+bias, err)
	}
	if !bytes.Equal(b, s.Insn) {
		t.Errorf("%s: process has % x at %#x, Insn is % x", s.Func, b, s.Addr+bias, s.Insn)
	}
}

func TestRunningProcess(t *testing.T) {
	for name, flags := range map[string][]string{
		"pie":   {"-O1", "-g"},
		"nopie": {"-O1", "-g", "-no-pie"},
	} {
		t.Run(name, func(t *testing.T) {
			bin := fixture.C(t, "elf_target.c", flags...)
			pid := startSleeper(t, bin)
			exe, err := proc.Exe(pid)
			if err != nil || exe != bin {
				t.Fatalf("Exe(%d) = %q, %v; want %q", pid, exe, err, bin)
			}
			maps, err := proc.Maps(pid)
			if err != nil {
				t.Fatal(err)
			}
			if objs := proc.Objects(maps); len(objs) < 3 || objs[0] != bin {
				t.Fatalf("Objects: %q", objs)
			}
			second := fmt.Sprintf("elf_greet+%#x", len(resolveOne(t, Target{PID: pid}, "elf_greet").Insn))
			sites, err := Resolve(specs("elf_add", second, "libc:malloc", "puts@plt", "ld-linux-x86-64:*"), Target{PID: pid})
			if err != nil {
				t.Fatal(err)
			}
			if len(sites) < 20 {
				t.Errorf("only %d sites", len(sites))
			}
			for _, s := range sites {
				checkRuntimeBytes(t, pid, maps, s)
			}
			if bias, _ := Bias(maps, bin); (name == "nopie") != (bias == 0) {
				t.Errorf("bias of the executable: %#x", bias)
			}

			// List fills Runtime = Addr + bias.
			syms, err := List(Target{PID: pid}, "malloc")
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]bool{}
			for _, s := range syms {
				kinds[filepath.Base(s.Object)+" "+s.Kind] = true
				bias, err := Bias(maps, s.Object)
				if err != nil || s.Runtime != s.Addr+bias || s.Runtime == 0 {
					t.Errorf("%+v: bias %#x %v", s, bias, err)
				}
			}
			if !kinds["libc.so.6 func"] || !kinds[filepath.Base(bin)+" plt"] {
				t.Errorf("List(malloc) found %v", kinds)
			}
		})
	}
}

func TestRunningGoProcess(t *testing.T) {
	bin := fixture.Go(t, "elf_gohello", "-buildmode=pie")
	pid := startSleeper(t, bin)
	maps, err := proc.Maps(pid)
	if err != nil {
		t.Fatal(err)
	}
	sites, err := Resolve(specs("main.*", "runtime.mallocgc"), Target{PID: pid})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sites {
		checkRuntimeBytes(t, pid, maps, s)
	}
}

// TestBiasDeletedAndInode matches a mapping by " (deleted)" path and by
// device and inode when the path differs (a symlink or another mount).
func TestBiasDeletedAndInode(t *testing.T) {
	bin := fixture.C(t, "elf_target.c")
	pid := startSleeper(t, bin)
	maps, err := proc.Maps(pid)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Bias(maps, bin)
	if err != nil {
		t.Fatal(err)
	}
	deleted := append([]proc.Mapping(nil), maps...)
	renamed := append([]proc.Mapping(nil), maps...)
	for i := range maps {
		if maps[i].Path == bin {
			deleted[i].Path += " (deleted)"
			renamed[i].Path = "/elsewhere/prog"
		}
	}
	for name, m := range map[string][]proc.Mapping{"deleted": deleted, "inode": renamed} {
		if got, err := Bias(m, bin); err != nil || got != want {
			t.Errorf("%s: bias %#x, %v; want %#x", name, got, err, want)
		}
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	if got, err := Bias(maps, link); err != nil || got != want {
		t.Errorf("symlink: bias %#x, %v; want %#x", got, err, want)
	}
}
