//go:build linux && amd64

package compare

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// sampleReport has one row of every kind: baseline, ranked, flagged, n/a.
func sampleReport() *Report {
	rows := []Row{
		{Tool: "untraced", Scenario: "entry", Baseline: true, PerEvent: Spread{0.002, 0.002, 0.003}, Startup: 1.2, Calls: [2]int{40000, 200000}, Seen: 200000, Expected: 200000, Command: "BIN N 1 call"},
		{Tool: "utap uprobe", Scenario: "entry", PerEvent: Spread{18.5, 19.25, 21}, Startup: 35.5, Calls: [2]int{15000, 75000}, Seen: 75000, Expected: 75000, Command: "utap run --backend uprobe -q --format json -e utap_workload_target -o OUT -- BIN N 1 call"},
		{Tool: "ltrace", Scenario: "entry", PerEvent: Spread{320, 333, 350}, Startup: 12, Calls: [2]int{900, 4500}, Seen: 4500, Expected: 4500, Command: "ltrace -f -L -x utap_workload_target -o OUT -- BIN N 1 call"},
		{Tool: "bpftrace", Scenario: "entry", PerEvent: Spread{4, 5, 6}, Startup: 300, Calls: [2]int{40000, 200000}, Seen: 150000, Expected: 200000, Command: `bpftrace -q -o OUT -e 'uprobe:BIN:utap_workload_target /pid == cpid/ { printf("E\n"); }' -c 'BIN N 1 call'`},
		{Tool: "gdb", Scenario: "cond-false", Skip: "gdb not found on PATH"},
		{Tool: "utap ptrace", Scenario: "cond-false", PerEvent: Spread{25, 29, 30}, Calls: [2]int{10000, 50000}, Command: "utap run ..."},
	}
	for i := range rows {
		rows[i].Flag = CheckEvents(rows[i].Seen, rows[i].Expected)
	}
	Rank(rows)
	return &Report{
		Command: "utap compare --repeat 3", Machine: "Linux 6.18, 2 CPUs", Workload: "C: built at run time with gcc -O1",
		Repeat: 3, Date: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Rows: rows,
	}
}

func render(t *testing.T, f func(io.Writer, *Report) error) string {
	t.Helper()
	var b bytes.Buffer
	if err := f(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestWriteText(t *testing.T) {
	out := render(t, WriteText)
	lines := strings.Split(out, "\n")
	var header, uprobe, ltrace, bpf, gdb string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "scenario"):
			header = l
		case strings.Contains(l, "utap uprobe") && !strings.Contains(l, "utap run"):
			uprobe = l
		case strings.Contains(l, " ltrace ") && !strings.Contains(l, "-x"):
			ltrace = l
		case strings.Contains(l, " bpftrace ") && !strings.Contains(l, "-e"):
			bpf = l
		case strings.Contains(l, " gdb "):
			gdb = l
		}
	}
	for _, c := range []struct{ line, want string }{
		{uprobe, "19.2"}, {uprobe, "1.0x"}, {uprobe, "75000/75000"},
		{ltrace, "333"}, {ltrace, "17.3x"},
		{bpf, "not ranked: dropped 50000 of 200000 events"},
		{gdb, "n/a: gdb not found on PATH"},
	} {
		if !strings.Contains(c.line, c.want) {
			t.Errorf("line %q lacks %q", c.line, c.want)
		}
	}
	// Numbers align right: the median column ends at the same place.
	end := strings.Index(header, "median") + len("median")
	for _, l := range []string{uprobe, ltrace} {
		if len(l) < end || l[end-1] == ' ' || l[end] != ' ' {
			t.Errorf("median column misaligned:\n%s\n%s", header, l)
		}
	}
	if !strings.Contains(out, "ltrace -f -L -x utap_workload_target -o OUT -- BIN N 1 call") {
		t.Error("commands missing")
	}
}

func TestWriteJSON(t *testing.T) {
	out := render(t, WriteJSON)
	var back Report
	if err := json.Unmarshal([]byte(out), &back); err != nil {
		t.Fatal(err)
	}
	want := sampleReport()
	if len(back.Rows) != len(want.Rows) || back.Rows[1].PerEvent != want.Rows[1].PerEvent || back.Rows[3].Flag == "" || back.Rows[4].Skip == "" {
		t.Errorf("round trip lost data: %+v", back.Rows)
	}
	for _, key := range []string{`"us_per_event"`, `"median": 19.25`, `"seen": 150000`, `"skip": "gdb not found on PATH"`, `"baseline": true`} {
		if !strings.Contains(out, key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}

func TestWriteMarkdown(t *testing.T) {
	out := render(t, WriteMarkdown)
	for _, want := range []string{
		"Made by `utap compare --repeat 3` on 2026-01-02.",
		"| scenario | tool | µs/call min | median | max | ratio | calls | events seen/expected | startup ms | note |",
		"| entry | utap uprobe | 18.5 | **19.2** | 21.0 | 1.0x | 15000, 75000 | 75000/75000 | 35.5 |  |",
		"| entry | bpftrace | 4.00 | **5.00** | 6.00 | - | 40000, 200000 | 150000/200000 | 300.0 | not ranked: dropped 50000 of 200000 events |",
		"| cond-false | gdb | n/a | **n/a** | n/a | - | - | - | - | n/a: gdb not found on PATH |",
		"- entry, ltrace: `ltrace -f -L -x utap_workload_target -o OUT -- BIN N 1 call`",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q\n%s", want, out)
		}
	}
	// Every table line has the header's column count.
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "|") && strings.Count(strings.ReplaceAll(l, `\|`, ""), "|") != 11 {
			t.Errorf("bad column count: %s", l)
		}
	}
}

func TestWriteSVG(t *testing.T) {
	out := render(t, WriteSVG)
	// Well-formed XML, with a bar per measured row (baseline left out).
	dec := xml.NewDecoder(strings.NewReader(out))
	rects := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
			rects++
		}
	}
	if want := 2 + 4; rects != want { // background, hatch pattern, 4 bars
		t.Errorf("%d rects; want %d", rects, want)
	}
	for _, want := range []string{"url(#hatch)", "n/a: gdb not found on PATH", ">1<", ">1000<", "17.3x"} {
		if !strings.Contains(out, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	if os.Getenv("UTAP_SVG_OUT") != "" {
		os.WriteFile(os.Getenv("UTAP_SVG_OUT"), []byte(out), 0o644)
	}
}
