package compare

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// SVG layout, in pixels.
const (
	svgLabel  = 190 // tool names left of the plot
	svgPlot   = 560 // plot width
	svgRight  = 170 // values and notes right of the plot
	svgBar    = 14
	svgRow    = 20
	svgHeader = 26 // a scenario's title
	svgTop    = 56
)

// toolColor picks a bar colour: utap's engines stand out from the peers.
func toolColor(tool string) string {
	switch {
	case strings.HasPrefix(tool, "utap uprobe"):
		return "#1b7f3b"
	case strings.HasPrefix(tool, "utap"):
		return "#2a6fb5"
	}
	return "#8a8f98"
}

// WriteSVG draws the report as horizontal bars, one group per scenario, on
// a log scale of µs per call: bar to the median, whisker from min to max.
// Flagged rows are hatched, n/a rows say why in words.
func WriteSVG(w io.Writer, rep *Report) error {
	lo, hi := math.Inf(1), math.Inf(-1)
	rows, groups := 0, 0
	last := ""
	for i := range rep.Rows {
		r := &rep.Rows[i]
		if r.Baseline {
			continue
		}
		if r.Scenario != last {
			groups++
			last = r.Scenario
		}
		rows++
		if r.Skip != "" {
			continue
		}
		for _, x := range []float64{r.PerEvent.Min, r.PerEvent.Median, r.PerEvent.Max} {
			if x > 0 {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 1, 10
	}
	d0, d1 := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if d1 <= d0 {
		d1 = d0 + 1
	}
	xOf := func(v float64) float64 {
		if v <= 0 {
			return svgLabel
		}
		f := (math.Log10(v) - d0) / (d1 - d0)
		return svgLabel + math.Max(0, math.Min(1, f))*svgPlot
	}
	width := svgLabel + svgPlot + svgRight
	height := svgTop + groups*svgHeader + rows*svgRow + 40

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	b.WriteString(`<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#f3d3d3"/><line x1="0" y1="0" x2="0" y2="6" stroke="#c0392b" stroke-width="2"/></pattern></defs>` + "\n")
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="15" font-weight="bold">Per-call tracing overhead, µs (log scale; lower is better)</text>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="38" fill="#555">%s; %d repetitions, bar: median, whisker: min–max</text>`+"\n", html.EscapeString(rep.Workload), rep.Repeat)

	plotBottom := height - 34
	for d := d0; d <= d1; d++ {
		x := xOf(math.Pow(10, d))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", x, svgTop, x, plotBottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>`+"\n", x, plotBottom+16, tick(d))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" fill="#555">µs per call</text>`+"\n", svgLabel+svgPlot/2, plotBottom+30)

	y := svgTop
	last = ""
	for i := range rep.Rows {
		r := &rep.Rows[i]
		if r.Baseline {
			continue
		}
		if r.Scenario != last {
			last = r.Scenario
			y += svgHeader
			fmt.Fprintf(&b, `<text x="10" y="%d" font-weight="bold">%s</text>`+"\n", y-8, html.EscapeString(r.Scenario))
		}
		mid := y + svgRow/2
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", svgLabel-8, mid+4, html.EscapeString(r.Tool))
		switch {
		case r.Skip != "":
			fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#999" font-style="italic">n/a: %s</text>`+"\n", svgLabel+4, mid+4, html.EscapeString(short(r.Skip, 90)))
		default:
			fill := toolColor(r.Tool)
			note := us(r.PerEvent.Median)
			if r.Ratio > 0 {
				note += fmt.Sprintf(" (%.1fx)", r.Ratio)
			}
			if r.Flag != "" {
				fill, note = "url(#hatch)", note+" "+short(r.Flag, 28)
			}
			x1 := xOf(r.PerEvent.Median)
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", svgLabel, mid-svgBar/2, math.Max(1, x1-svgLabel), svgBar, fill)
			wl, wh := xOf(r.PerEvent.Min), xOf(r.PerEvent.Max)
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black"/>`+"\n", wl, mid, wh, mid)
			fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s</text>`+"\n", math.Max(x1, wh)+6, mid+4, html.EscapeString(note))
		}
		y += svgRow
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// tick labels a power of ten of µs.
func tick(d float64) string {
	v := math.Pow(10, d)
	if v < 1 {
		return fmt.Sprintf("%g", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func short(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
