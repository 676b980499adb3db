//go:build linux && amd64

package enginetest

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/utap/utap/internal/fixture"
	"github.com/utap/utap/probe"
)

// The USDT tests build their sites by hand from the notes, as elfsym's
// resolver does (elfsym/usdt.go): the engines are tested apart from it.

func usdtEngine(t *testing.T) string { return fixture.C(t, "usdt_engine.c") }

// stapNote is one .note.stapsdt descriptor, pc and semaphore adjusted for
// prelink by .stapsdt.base as sys/sdt.h describes.
type stapNote struct {
	pc, sem        uint64
	provider, name string
	args           []string
}

func readStapNotes(t *testing.T, bin string) []stapNote {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sec := f.Section(".note.stapsdt")
	if sec == nil {
		t.Fatalf("%s has no .note.stapsdt", bin)
	}
	data, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	var base uint64
	if b := f.Section(".stapsdt.base"); b != nil {
		base = b.Addr
	}
	le := binary.LittleEndian
	var notes []stapNote
	for off := 0; off+12 <= len(data); {
		namesz, descsz, typ := int(le.Uint32(data[off:])), int(le.Uint32(data[off+4:])), le.Uint32(data[off+8:])
		name := string(bytes.TrimRight(data[off+12:off+12+namesz], "\x00"))
		desc := data[off+12+(namesz+3)&^3:][:descsz]
		off += 12 + (namesz+3)&^3 + (descsz+3)&^3
		if name != "stapsdt" || typ != 3 {
			continue
		}
		strs := bytes.SplitN(desc[24:], []byte{0}, 4)
		n := stapNote{pc: le.Uint64(desc), sem: le.Uint64(desc[16:]),
			provider: string(strs[0]), name: string(strs[1]), args: strings.Fields(string(strs[2]))}
		if d := base - le.Uint64(desc[8:]); base != 0 && d != 0 {
			n.pc += d
			if n.sem != 0 {
				n.sem += d
			}
		}
		notes = append(notes, n)
	}
	return notes
}

// fileOffset is the file offset of link-time address addr.
func fileOffset(t *testing.T, bin string, addr uint64) uint64 {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && addr >= p.Vaddr && addr < p.Vaddr+p.Filesz {
			return addr - p.Vaddr + p.Off
		}
	}
	t.Fatalf("%#x is in no PT_LOAD of %s with file bytes", addr, bin)
	return 0
}

// usdtSites are the sites of provider:name in bin, each fetching its
// operands (as the spec "usdt:provider:name" with no fetches does) and then
// extra.
func usdtSites(t *testing.T, bin, provider, name string, idx int, extra ...probe.Expr) []probe.Site {
	t.Helper()
	spec := &probe.Spec{Text: "usdt:" + provider + ":" + name, Provider: provider, Symbol: name}
	var sites []probe.Site
	for _, n := range readStapNotes(t, bin) {
		if n.provider != provider || n.name != name {
			continue
		}
		s := probe.Site{
			Spec: spec, Probe: idx, Object: bin, Func: provider + ":" + name,
			FuncAddr: n.pc, Addr: n.pc, FileOffset: fileOffset(t, bin, n.pc),
			USDT: true, Semaphore: n.sem, Operands: n.args,
		}
		code := make([]byte, 1)
		if f, err := os.Open(bin); err != nil {
			t.Fatal(err)
		} else {
			_, err = f.ReadAt(code, int64(s.FileOffset))
			f.Close()
			if err != nil || code[0] != 0x90 {
				t.Fatalf("%s: no nop at %#x: % x %v", s.Func, n.pc, code, err)
			}
		}
		s.Insn = code
		if n.sem != 0 {
			s.SemaphoreOffset = fileOffset(t, bin, n.sem)
		}
		for i, op := range n.args {
			e := usdtOperand(t, op)
			s.Args = append(s.Args, e)
			s.Fetches = append(s.Fetches, probe.Fetch{Expr: e, Text: "arg" + strconv.Itoa(i+1)})
		}
		for _, e := range extra {
			s.Fetches = append(s.Fetches, probe.Fetch{Expr: e, Format: probe.FormatHex, Text: e.String()})
		}
		sites = append(sites, s)
	}
	if len(sites) == 0 {
		t.Fatalf("no USDT probe %s:%s in %s", provider, name, bin)
	}
	return sites
}

// subRegs maps the register names USDT operands use to the 64-bit ones.
var subRegs = map[string]string{
	"al": "rax", "ax": "rax", "eax": "rax", "bl": "rbx", "bx": "rbx", "ebx": "rbx",
	"cl": "rcx", "cx": "rcx", "ecx": "rcx", "dl": "rdx", "dx": "rdx", "edx": "rdx",
	"sil": "rsi", "si": "rsi", "esi": "rsi", "dil": "rdi", "di": "rdi", "edi": "rdi",
	"bpl": "rbp", "bp": "rbp", "ebp": "rbp", "spl": "rsp", "sp": "rsp", "esp": "rsp",
}

func regName(t *testing.T, r string) string {
	r = strings.TrimPrefix(r, "%")
	if full, ok := subRegs[r]; ok {
		return full
	}
	if strings.HasPrefix(r, "r") {
		if n := strings.TrimRight(r[1:], "bwd"); n != "" {
			if _, err := strconv.Atoi(n); err == nil {
				return "r" + n
			}
		}
		return r // rax..rsp
	}
	t.Fatalf("USDT register %q", r)
	return ""
}

// usdtOperand is the expression of one operand: -4@%ecx, 8@-16(%rbp),
// 4@$5. Enough for the fixture; elfsym's parser covers the rest.
func usdtOperand(t *testing.T, op string) probe.Expr {
	t.Helper()
	at := strings.IndexByte(op, '@')
	size, err := strconv.Atoi(op[:at])
	if err != nil {
		t.Fatalf("operand %q: %v", op, err)
	}
	typ := probe.Type{Size: uint8(max(size, -size)), Signed: size < 0}
	loc := op[at+1:]
	switch {
	case strings.HasPrefix(loc, "$"):
		v, err := strconv.ParseInt(loc[1:], 0, 64)
		if err != nil {
			t.Fatalf("operand %q: %v", op, err)
		}
		return &probe.Cast{To: typ, X: &probe.Const{Val: uint64(v), T: probe.S64}}
	case strings.HasPrefix(loc, "%"):
		return &probe.Cast{To: typ, X: &probe.Reg{Name: regName(t, loc)}}
	}
	open := strings.IndexByte(loc, '(')
	if open < 0 || !strings.HasSuffix(loc, ")") || strings.Contains(loc, ",") {
		t.Fatalf("operand %q: form not handled by this test", op)
	}
	var disp int64
	if open > 0 {
		if disp, err = strconv.ParseInt(loc[:open], 0, 64); err != nil {
			t.Fatalf("operand %q: %v", op, err)
		}
	}
	addr := &probe.Binary{Op: probe.OpAdd, X: &probe.Reg{Name: regName(t, loc[open+1:len(loc)-1])},
		Y: &probe.Const{Val: uint64(disp), T: probe.S64}, T: probe.U64}
	return &probe.Deref{T: typ, Addr: addr}
}

// usdtTracee is a running usdt_engine with its stdin and stdout.
type usdtTracee struct {
	cmd   *exec.Cmd
	pid   int
	in    io.WriteCloser
	lines chan string
}

func startUSDT(t *testing.T, argv ...string) *usdtTracee {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tr := &usdtTracee{cmd: cmd, pid: cmd.Process.Pid, in: in, lines: make(chan string, 64)}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			tr.lines <- s.Text()
		}
		close(tr.lines)
	}()
	return tr
}

func (tr *usdtTracee) next(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-tr.lines:
		if !ok {
			t.Fatalf("pid %d closed its output", tr.pid)
		}
		return l
	case <-time.After(10 * time.Second):
		t.Fatalf("pid %d printed nothing in 10s", tr.pid)
	}
	return ""
}

// field is the value of key=V in line, as an integer (hex with 0x).
func field(t *testing.T, line, key string) uint64 {
	t.Helper()
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			n, err := strconv.ParseUint(v, 0, 64)
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("no %s= in %q", key, line)
	return 0
}

// semAt reads the 2-byte counter at addr of pid.
func semAt(t *testing.T, pid int, addr uint64) uint16 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b [2]byte
	if _, err := f.ReadAt(b[:], int64(addr)); err != nil {
		t.Fatal(err)
	}
	return binary.LittleEndian.Uint16(b[:])
}
