package probe

// DefaultStackDepth is --stack-depth's default: how many frames -k shows.
const DefaultStackDepth = 16

// Frame is one frame of an event's user stack (-k): a return address
// (the probed pc for the first), with what the CLI's symbolizer found
// for it (elfsym.Symbolizer). Engines fill in Addr only.
type Frame struct {
	Addr   uint64 `json:"addr"`
	Object string `json:"object"` // the mapped file, "" when none
	Func   string `json:"func"`   // "" when no symbol covers it
	Offset uint64 `json:"offset"` // from Func's start
	File   string `json:"file"`   // source file from DWARF line info, "" when none
	Line   int    `json:"line"`
}
