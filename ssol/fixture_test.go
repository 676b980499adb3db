//go:build linux && amd64

package ssol

import (
	"debug/elf"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
)

// TestRelocFixture builds testdata/fixtures/ssol_reloc.S (the ptrace
// engine's relocation test program), checks its output is stable, and
// checks that its functions cover the instruction classes: every
// instruction of every function gets a decision, none is refused.
func TestRelocFixture(t *testing.T) {
	bin := fixture.C(t, "ssol_reloc.S", "-O0", "-g")
	run := func() string {
		out, err := exec.Command(bin).Output()
		if err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		return string(out)
	}
	first := run()
	if second := run(); first != second || !strings.Contains(first, "checksum ") {
		t.Fatalf("unstable or bad output:\n%s\n---\n%s", first, second)
	}
	cpuinfo, _ := os.ReadFile("/proc/cpuinfo")
	t.Logf("avx in /proc/cpuinfo: %v; output:\n%s", strings.Contains(string(cpuinfo), " avx"), first)

	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	text := f.Section(".text")
	code, err := text.Data()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Section == elf.SHN_UNDEF || s.Size == 0 ||
			s.Value < text.Addr || s.Value+s.Size > text.Addr+text.Size {
			continue
		}
		if crt[s.Name] || strings.HasPrefix(s.Name, "_") {
			continue // the C runtime's, not ours
		}
		body := code[s.Value-text.Addr:][:s.Size]
		for off := 0; off < len(body); {
			in, err := Analyze(body[off:], s.Value+uint64(off))
			if err != nil {
				t.Fatalf("%s+%#x: %v", s.Name, off, err)
			}
			class := []string{"", "emulate", "boost", "step"}[in.Action]
			if in.an.dispOff >= 0 {
				class = "rip-relative"
				if in.ActionFor(0x7fff_0000_0000) == Step {
					seen["far-step"] = true
				}
			}
			op := strings.Fields(in.Text)[0]
			seen[class+" "+op] = true
			off += len(in.Bytes)
		}
	}
	for _, want := range []string{
		"rip-relative mov", "rip-relative lea", "rip-relative cmp", "rip-relative lock", "rip-relative movdqa",
		"rip-relative movaps", "rip-relative vpaddq", "rip-relative vmovq", "rip-relative vmovdqu64",
		"emulate call", "emulate jmp", "emulate jl", "emulate jnl", "emulate ret", "emulate push",
		"emulate loop", "emulate jrcxz", "emulate endbr64", "emulate nop", "boost cmovl", "far-step",
	} {
		if !seen[want] {
			t.Errorf("no %q in the fixture", want)
		}
	}
	if t.Failed() {
		t.Log(seen)
	}
}

var crt = map[string]bool{"deregister_tm_clones": true, "register_tm_clones": true, "frame_dummy": true}
