package probe

import (
	"errors"
	"strings"
	"testing"
)

func TestParseFile(t *testing.T) {
	const file = `# probes for the demo
work(arg1:x)   # trailing comment

  return:work(ret) if ret < 0
libc:open(str(arg1)) if str(arg1) == "/tmp/#not-a-comment"
`
	specs, err := ParseFile(strings.NewReader(file), "demo.probes")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"work(arg1:x)",
		"return:work(ret) if (ret < 0)",
		`libc:open(str(arg1)) if (str(arg1) == "/tmp/#not-a-comment")`,
	}
	if len(specs) != len(want) {
		t.Fatalf("got %d specs, want %d", len(specs), len(want))
	}
	for i, s := range specs {
		if s.String() != want[i] {
			t.Errorf("spec %d = %s, want %s", i, s, want[i])
		}
	}
	if specs[0].Text != "work(arg1:x)" {
		t.Errorf("Text = %q, want the line without comment and blanks", specs[0].Text)
	}
}

func TestParseFileError(t *testing.T) {
	_, err := ParseFile(strings.NewReader("work\n\n# x\nwork(a,\n"), "p.txt")
	want := `p.txt:4: spec "work(a," column 8: unexpected end of spec, want an expression`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %s", err, want)
	}
	var pe *ParseError
	if !errors.As(err, &pe) || !errors.Is(err, ErrSyntax) {
		t.Errorf("error %v does not wrap a *ParseError", err)
	}
}
