//go:build linux && amd64

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
	// svgCharWidth is about the width of a character at font-size 12.
	svgCharWidth = 6.5
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
// Flagged rows are hatched, n/a rows say why in words. The attach rows,
// in ms per 1,000 probes, get a panel and a scale of their own below.
func WriteSVG(w io.Writer, rep *Report) error {
	perCall, attach := split(rep.Rows)
	var panels []svgPanel
	if p := newPanel(perCall, fmt.Sprintf("µs per %s", strings.Fields(unitText(rep))[0])); p.rows > 0 {
		panels = append(panels, p)
	}
	if p := newPanel(attach, "attach + detach, ms per 1,000 probes"); p.rows > 0 {
		p.title = "Attach and detach of 1,000 probes, ms (log scale; lower is better)"
		panels = append(panels, p)
	}
	width := svgLabel + svgPlot + svgRight
	height := svgTop
	for i, p := range panels {
		height += p.height()
		if i > 0 {
			height += svgGap
		}
	}
	height += 6

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	b.WriteString(`<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#f3d3d3"/><line x1="0" y1="0" x2="0" y2="6" stroke="#c0392b" stroke-width="2"/></pattern></defs>` + "\n")
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="15" font-weight="bold">Per-%s tracing overhead, µs (log scale; lower is better)</text>`+"\n", strings.Fields(unitText(rep))[0])
	reps := fmt.Sprintf("%d repetitions", rep.Repeat)
	if rep.Runs > 1 {
		reps = fmt.Sprintf("%d runs × %d repetitions", rep.Runs, rep.Repeat)
	}
	sub := rep.Workload + "; " + reps + "; bar: median, whisker: min–max"
	if anyBelowZero(rep.Rows) {
		sub += "; ◀: whisker below zero"
	}
	if anyBelowNoise(rep.Rows) {
		sub += "; dashed: within noise"
	}
	fmt.Fprintf(&b, `<text x="10" y="38" fill="#555">%s</text>`+"\n", html.EscapeString(short(sub, 150)))
	y := svgTop
	for i, p := range panels {
		if i > 0 {
			y += svgGap
			fmt.Fprintf(&b, `<text x="10" y="%d" font-size="15" font-weight="bold">%s</text>`+"\n", y-14, html.EscapeString(p.title))
		}
		y = p.draw(&b, y, rep.Runs)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// svgGap separates two panels, room for the second one's title.
const svgGap = 36

// svgPanel is one chart: rows grouped by scenario on one log axis.
type svgPanel struct {
	list         []*Row
	rows, groups int
	d0, d1       float64 // decades of the axis
	axis, title  string
}

func newPanel(list []*Row, axis string) svgPanel {
	p := svgPanel{axis: axis}
	lo, hi := math.Inf(1), math.Inf(-1)
	last := ""
	for _, r := range list {
		if r.Baseline {
			continue
		}
		p.list = append(p.list, r)
		if r.Scenario != last {
			p.groups++
			last = r.Scenario
		}
		p.rows++
		if r.Skip != "" {
			continue
		}
		for _, x := range []float64{r.PerEvent.Min, r.PerEvent.Median, r.PerEvent.Max, r.Noise} {
			if x > 0 {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 1, 10
	}
	p.d0, p.d1 = math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if p.d1 <= p.d0 {
		p.d1 = p.d0 + 1
	}
	return p
}

func (p *svgPanel) height() int { return p.groups*svgHeader + p.rows*svgRow + 40 }

func (p *svgPanel) x(v float64) float64 {
	if v <= 0 {
		return svgLabel
	}
	f := (math.Log10(v) - p.d0) / (p.d1 - p.d0)
	return svgLabel + math.Max(0, math.Min(1, f))*svgPlot
}

// draw draws the panel from y down and returns where it ends.
func (p *svgPanel) draw(b *strings.Builder, top, runs int) int {
	bottom := top + p.height() - 34
	for d := p.d0; d <= p.d1; d++ {
		x := p.x(math.Pow(10, d))
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", x, top, x, bottom)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>`+"\n", x, bottom+16, tick(d))
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" fill="#555">%s</text>`+"\n", svgLabel+svgPlot/2, bottom+30, html.EscapeString(p.axis))

	y := top
	last := ""
	for _, r := range p.list {
		if r.Scenario != last {
			last = r.Scenario
			y += svgHeader
			fmt.Fprintf(b, `<text x="10" y="%d" font-weight="bold">%s</text>`+"\n", y-8, html.EscapeString(r.Scenario))
		}
		mid := y + svgRow/2
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", svgLabel-8, mid+4, html.EscapeString(r.Tool))
		switch {
		case r.Skip != "":
			fmt.Fprintf(b, `<text x="%d" y="%d" fill="#999" font-style="italic">n/a: %s</text>`+"\n", svgLabel+4, mid+4, html.EscapeString(short(r.Skip, 90)))
		default:
			p.drawBar(b, r, mid, runs)
		}
		y += svgRow
	}
	return top + p.height()
}

// drawBar draws a measured row at height mid: a bar to the median (a
// dashed outline to the bound when within the noise of zero), the
// whisker, a marker where the whisker leaves the log scale below zero,
// and the value.
func (p *svgPanel) drawBar(b *strings.Builder, r *Row, mid, runs int) {
	fill := toolColor(r.Tool)
	note := us(r.PerEvent.Median)
	if r.BelowNoise {
		note = noiseText(r) + " (within noise)"
	}
	if r.Ratio > 0 {
		note += fmt.Sprintf(" (%.1fx)", r.Ratio)
	}
	if runs > 1 && r.Unsteady() {
		note += fmt.Sprintf(" unsteady ±%.0f%%", 100*r.Drift)
	}
	if r.Flag != "" {
		fill, note = "url(#hatch)", note+" "+short(r.Flag, 48)
	}
	if r.Note != "" {
		note += " (" + short(r.Note, 48) + ")"
	}
	x1 := p.x(r.PerEvent.Median)
	if r.BelowNoise {
		// No median to draw: outline the range it lies below.
		x1 = p.x(r.Noise)
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="none" stroke="%s" stroke-dasharray="3,2"/>`+"\n", svgLabel, mid-svgBar/2, math.Max(1, x1-svgLabel), svgBar, toolColor(r.Tool))
	} else {
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", svgLabel, mid-svgBar/2, math.Max(1, x1-svgLabel), svgBar, fill)
	}
	wl, wh := p.x(r.PerEvent.Min), p.x(r.PerEvent.Max)
	fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black"/>`+"\n", wl, mid, wh, mid)
	if r.PerEvent.Min <= 0 {
		// A log scale has no zero: the whisker goes on past its edge.
		fmt.Fprintf(b, `<polygon points="%d,%d %d,%d %d,%d" fill="black"><title>whisker below zero, off the log scale</title></polygon>`+"\n",
			svgLabel-3, mid, svgLabel+4, mid-4, svgLabel+4, mid+4)
	}
	lx := math.Max(x1, wh) + 6
	if lx+svgCharWidth*float64(len([]rune(note))) > svgLabel+svgPlot+svgRight && !r.BelowNoise {
		// No room right of the bar: write inside it, in white.
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="end" fill="white">%s</text>`+"\n", x1-6, mid+4, html.EscapeString(note))
		return
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%d">%s</text>`+"\n", lx, mid+4, html.EscapeString(note))
}

// anyBelowZero reports whether a drawn row's whisker goes below zero.
func anyBelowZero(rows []Row) bool {
	for _, r := range rows {
		if !r.Baseline && r.Skip == "" && r.PerEvent.Min <= 0 {
			return true
		}
	}
	return false
}

// anyBelowNoise reports whether a row is within the noise of zero.
func anyBelowNoise(rows []Row) bool {
	for _, r := range rows {
		if r.BelowNoise {
			return true
		}
	}
	return false
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
