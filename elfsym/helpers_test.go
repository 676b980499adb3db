//go:build linux && amd64

package elfsym

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/utap/utap/probe"
)

// spec builds an entry spec from "[object:]symbol[+off]" or
// "[object:]0xADDR", without the probe parser.
func spec(text string) *probe.Spec {
	s := &probe.Spec{Text: text}
	loc := text
	if obj, sym, ok := probe.CutObject(loc); ok {
		s.Object, loc = obj, sym
	}
	if strings.HasPrefix(loc, "0x") {
		s.Address, _ = strconv.ParseUint(loc[2:], 16, 64)
		return s
	}
	if sym, off, ok := strings.Cut(loc, "+"); ok {
		loc = sym
		s.Offset, _ = strconv.ParseUint(off, 0, 64)
	}
	s.Symbol = loc
	return s
}

func resolveOne(t *testing.T, tgt Target, text string) probe.Site {
	t.Helper()
	sites, err := Resolve([]*probe.Spec{spec(text)}, tgt)
	if err != nil {
		t.Fatalf("Resolve(%q): %v", text, err)
	}
	if len(sites) != 1 {
		t.Fatalf("Resolve(%q): %d sites, want 1: %+v", text, len(sites), sites)
	}
	return sites[0]
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// nmAddr returns the address nm gives a symbol of bin.
func nmAddr(t *testing.T, bin, name string, dynamic bool) uint64 {
	t.Helper()
	args := []string{bin}
	if dynamic {
		args = []string{"-D", bin}
	}
	for _, line := range strings.Split(run(t, "nm", args...), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[2] == name {
			v, err := strconv.ParseUint(f[0], 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatalf("nm: no %s in %s", name, bin)
	return 0
}

var objdumpLabel = regexp.MustCompile(`^([0-9a-f]+) <(.+)@plt>:$`)

// objdumpPLT returns objdump's PLT stub labels of bin (name -> address),
// leaving out the IRELATIVE ones it names *ABS*+0x...
func objdumpPLT(t *testing.T, bin string) map[string]uint64 {
	t.Helper()
	stubs := map[string]uint64{}
	for _, line := range strings.Split(run(t, "objdump", "-d", bin), "\n") {
		m := objdumpLabel.FindStringSubmatch(line)
		if m == nil || strings.HasPrefix(m[2], "*ABS*") {
			continue
		}
		v, _ := strconv.ParseUint(m[1], 16, 64)
		stubs[m[2]+"@plt"] = v
	}
	return stubs
}

// checkSiteBytes checks a site against the file: Insn is what the file
// holds at FileOffset.
func checkSiteBytes(t *testing.T, s probe.Site) {
	t.Helper()
	if len(s.Insn) == 0 {
		t.Fatalf("%s: empty Insn", s.Func)
	}
	f, err := os.Open(s.Object)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, len(s.Insn))
	if _, err := f.ReadAt(b, int64(s.FileOffset)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, s.Insn) {
		t.Errorf("%s: file bytes at %#x are % x, Insn is % x", s.Func, s.FileOffset, b, s.Insn)
	}
}

// gcc builds a C fixture with extra flags into dir (for variants the
// fixture cache cannot express, like libraries and rpaths).
func gcc(t *testing.T, out string, args ...string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, "gcc", append(args, "-o", out)...)
	return out
}

func tempCopy(t *testing.T, src, name string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

func strconvHex(v uint64) string { return strconv.FormatUint(v, 16) }
func itoa(v int) string          { return strconv.Itoa(v) }

func specs(texts ...string) []*probe.Spec {
	var out []*probe.Spec
	for _, t := range texts {
		out = append(out, spec(t))
	}
	return out
}
