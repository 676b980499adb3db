//go:build linux && amd64

package syscalls

// xarg shows an argument by a table: as flags (printflags) or as one
// value (printxval, unknown values in hex or decimal).
type xarg struct {
	x    xlat
	enum bool
	dec  bool // enum: an unknown value in decimal rather than hex
}

// argXlats: the arguments shown by name, per call and argument index
// (a 32-bit value: the kernel takes these as int or unsigned int).
var argXlats = map[string]map[int]xarg{
	"faccessat2":        {3: {x: faccessatFlags}},
	"inotify_init1":     {0: {x: inotifyInitFlags}},
	"inotify_add_watch": {2: {x: inotifyMask}},
	"preadv2":           {5: {x: rwfFlags}},
	"pwritev2":          {5: {x: rwfFlags}},
	"flock":             {1: {x: flockOps}},
	"fallocate":         {1: {x: fallocFlags}},
	"memfd_create":      {1: {x: memfdFlags}},
	"msync":             {2: {x: msyncFlags}},
	"splice":            {5: {x: spliceFlags}},
	"tee":               {3: {x: spliceFlags}},
	"vmsplice":          {3: {x: spliceFlags}},
	"shutdown":          {1: {x: shutdownHow, enum: true, dec: true}},
	"timerfd_create":    {1: {x: timerfdFlags}},
	"timerfd_settime":   {1: {x: timerfdFlags}},
	"signalfd4":         {3: {x: sfdFlags}},
	"getitimer":         {0: {x: itimerWhich, enum: true}},
	"setitimer":         {0: {x: itimerWhich, enum: true}},
	"getrusage":         {0: {x: rusageWho, enum: true}},
	"waitid":            {0: {x: waitidTypes, enum: true}, 3: {x: waitOpts}},
}

func (a xarg) str(v uint64) string {
	v = uint64(uint32(v))
	if a.enum {
		return a.x.enum(v, !a.dec)
	}
	return a.x.flags(v)
}
