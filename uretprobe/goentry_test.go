package uretprobe

import (
	"debug/elf"
	"debug/gosym"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/internal/need"
)

func TestGoEntry(t *testing.T) {
	need.Tool(t, "objdump")
	path := fixture.Go(t, "ret_go")
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	text := f.Section(".text")
	data, _ := text.Data()
	pcln, _ := f.Section(".gopclntab").Data()
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(pcln, text.Addr))
	if err != nil {
		t.Fatal(err)
	}
	// objdump's view: the instruction before each address.
	out, err := exec.Command("objdump", "-d", "--no-show-raw-insn", "-j", ".text", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	prev := map[uint64]string{}
	var last string
	for _, line := range strings.Split(string(out), "\n") {
		addr, insn, ok := strings.Cut(line, ":\t")
		a, err := strconv.ParseUint(strings.TrimSpace(addr), 16, 64)
		if !ok || err != nil {
			continue
		}
		prev[a] = last
		last = insn
	}

	want := map[string]bool{"main.fib": true, "main.deep": true, "main.main": true, "main.classify": false}
	var split, nosplit int
	for _, fn := range tab.Funcs {
		code := data[fn.Entry-text.Addr : fn.End-text.Addr]
		entry, err := GoEntry(code, fn.Entry)
		if err != nil {
			t.Errorf("%s: %v", fn.Name, err)
			continue
		}
		if entry == fn.Entry {
			nosplit++
		} else {
			split++
			if p := prev[entry]; !strings.HasPrefix(p, "jbe") {
				t.Errorf("%s: entry %#x follows %q, not a jbe", fn.Name, entry, p)
			}
		}
		if w, ok := want[fn.Name]; ok && w != (entry != fn.Entry) {
			t.Errorf("%s: entry %#x (start %#x), want after the stack check: %v", fn.Name, entry, fn.Entry, w)
		}
	}
	t.Logf("%d functions with a stack check, %d without", split, nosplit)
	if split < 100 {
		t.Errorf("only %d stack checks found", split)
	}
}
