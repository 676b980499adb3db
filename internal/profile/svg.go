package profile

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"hash/fnv"
	"io"
	"strings"
)

// The flame graph's geometry, in SVG pixels (flamegraph.pl's defaults).
const (
	svgWidth    = 1200.0
	svgPad      = 10.0 // left and right
	frameHeight = 16.0
	fontSize    = 12.0
	charWidth   = fontSize * 0.59 // an average glyph of the font
	svgTop      = 40.0            // room for the title
	minWidth    = 0.1             // narrower frames are not drawn
)

// node is a frame in the flame graph's tree: the calls through it.
type node struct {
	name     string
	value    int64
	children []*node
	index    map[string]*node
}

func (n *node) child(name string) *node {
	if c := n.index[name]; c != nil {
		return c
	}
	if n.index == nil {
		n.index = map[string]*node{}
	}
	c := &node{name: name}
	n.index[name] = c
	n.children = append(n.children, c)
	return c
}

// WriteSVG writes a flame graph of the stacks as one SVG document, no
// script or style sheet needed: the root ("all") at the bottom, each
// frame a rectangle above its caller as wide as its share of v, named
// when the name fits (cut with ".." when not), and a <title> giving its
// name, value and share on hover. Siblings are in name order, as in
// flamegraph.pl, so the same stacks draw the same graph.
func (s *Stacks) WriteSVG(w io.Writer, v Value, title string) error {
	root := &node{name: "all"}
	depth := 0
	lines, totals := s.folded(v) // sorted: children come in name order
	for _, l := range lines {
		n := totals[l]
		root.value += n
		cur := root
		frames := strings.Split(l, ";")
		depth = max(depth, len(frames))
		for _, f := range frames {
			cur = cur.child(f)
			cur.value += n
		}
	}
	height := svgTop + float64(depth+1)*frameHeight + 2*svgPad
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<?xml version="1.0" standalone="no"?>
<svg version="1.1" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" xmlns="http://www.w3.org/2000/svg">
<rect x="0" y="0" width="100%%" height="100%%" fill="#f8f8f8"/>
<text x="%.0f" y="24" font-size="17" font-family="Verdana,sans-serif" text-anchor="middle">%s</text>
`, svgWidth, height, svgWidth, height, svgWidth/2, escape(title))
	if root.value == 0 {
		fmt.Fprintf(bw, `<text x="%.0f" y="%.0f" font-size="%.0f" font-family="Verdana,sans-serif" text-anchor="middle">no samples</text>
`, svgWidth/2, svgTop+frameHeight, fontSize)
	} else {
		g := svgGraph{w: bw, v: v, total: root.value, scale: (svgWidth - 2*svgPad) / float64(root.value),
			bottom: svgTop + float64(depth)*frameHeight}
		g.draw(root, svgPad, 0)
	}
	bw.WriteString("</svg>\n")
	return bw.Flush()
}

type svgGraph struct {
	w      *bufio.Writer
	v      Value
	total  int64
	scale  float64 // pixels per unit of value
	bottom float64 // the root's y
}

// draw writes n at x, depth levels above the root, then its children.
func (g *svgGraph) draw(n *node, x float64, depth int) {
	width := float64(n.value) * g.scale
	if width < minWidth {
		return
	}
	y := g.bottom - float64(depth)*frameHeight
	share := 100 * float64(n.value) / float64(g.total)
	fmt.Fprintf(g.w, `<g><title>%s (%s, %.2f%%)</title><rect x="%.1f" y="%.1f" width="%.1f" height="%.0f" fill="%s" rx="2" ry="2"/>`,
		escape(n.name), g.amount(n.value), share, x, y, width, frameHeight-1, color(n.name))
	if label := fit(n.name, width); label != "" {
		fmt.Fprintf(g.w, `<text x="%.1f" y="%.1f" font-size="%.0f" font-family="Verdana,sans-serif">%s</text>`,
			x+3, y+frameHeight-4.5, fontSize, escape(label))
	}
	g.w.WriteString("</g>\n")
	for _, c := range n.children {
		g.draw(c, x, depth+1)
		x += float64(c.value) * g.scale
	}
}

// amount is a value for the hover text.
func (g *svgGraph) amount(n int64) string {
	if g.v == Time {
		return fmt.Sprintf("%.3f ms", float64(n)/1e6)
	}
	if n == 1 {
		return "1 call"
	}
	return fmt.Sprintf("%d calls", n)
}

// fit is name cut to what width shows, ending in ".." when cut; "" when
// not even three characters fit.
func fit(name string, width float64) string {
	n := int((width - 6) / charWidth)
	r := []rune(name)
	switch {
	case n < 3:
		return ""
	case len(r) <= n:
		return name
	}
	return string(r[:n-2]) + ".."
}

// color is a warm colour for name, the same for the same name in every
// graph, as flamegraph.pl's "hot" palette.
func color(name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	v := h.Sum32()
	r := 205 + v%50
	gr := (v >> 8) % 230
	b := (v >> 16) % 55
	return fmt.Sprintf("rgb(%d,%d,%d)", r, gr, b)
}

func escape(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
