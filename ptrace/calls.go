//go:build linux && amd64

package ptrace

// callPairs pairs the entry and RET hits of functions whose return addresses
// are not hijacked (Method RetProbes), for durations. Each (stack, site)
// keeps a stack of open calls by stack position, so a missed return
// (longjmp, a panic, a tail call out of the function, an exception) is
// found and dropped at the next hit instead of pairing with a later one.
//
// A stack is what calls nest on: the thread id for C; for Go the
// goroutine (its g), since a goroutine may return on another thread than
// it entered on. Positions must decrease as calls nest and stay fixed for
// a call's lifetime: rsp for C; goPos for goroutine stacks, which move.
type callPairs struct {
	limit  int
	stacks map[uint64]map[int][]openCall
	retStats
}

type openCall struct {
	pos  uint64
	time int64
	args *entryArgs // the argument registers at entry, when a probe reads them at the return
}

// newCallPairs returns an empty correlator keeping at most limit open calls per
// (stack, site); limit <= 0 means defaultShadowLimit.
func newCallPairs(limit int) *callPairs {
	if limit <= 0 {
		limit = defaultShadowLimit
	}
	return &callPairs{limit: limit, stacks: map[uint64]map[int][]openCall{}}
}

// goPos maps the rsp of a goroutine whose stack ends at hi (g.stack.hi) to
// a position that survives the runtime copying the stack elsewhere.
func goPos(hi, rsp uint64) uint64 { return ^(hi - rsp) }

// Enter records a call of site at its entry probe, pos being the stack
// position of its return address (rsp at entry) and t the time.
func (c *callPairs) Enter(stack uint64, site int, pos uint64, t int64) {
	c.EnterArgs(stack, site, pos, t, nil)
}

// EnterArgs is Enter keeping the call's argument registers for its return.
func (c *callPairs) EnterArgs(stack uint64, site int, pos uint64, t int64, args *entryArgs) {
	sites := c.stacks[stack]
	if sites == nil {
		sites = map[int][]openCall{}
		c.stacks[stack] = sites
	}
	open := sites[site]
	// callPairs at or above this one's slot have ended unseen.
	n := len(open)
	for n > 0 && open[n-1].pos <= pos {
		n--
	}
	c.Dropped += uint64(len(open) - n)
	open = open[:n]
	if n >= c.limit {
		c.Missed++
	} else {
		open = append(open, openCall{pos, t, args})
	}
	sites[site] = open
}

// Return matches a RET hit of site, pos being the stack position of the
// return address about to be popped (rsp at the RET, as at entry), and
// returns the call's duration. ok is false when the entry was not seen
// (the trace began inside the call, or it was over the limit).
func (c *callPairs) Return(stack uint64, site int, pos uint64, t int64) (dur int64, ok bool) {
	dur, _, ok = c.ReturnArgs(stack, site, pos, t)
	return dur, ok
}

// ReturnArgs is Return giving back the arguments EnterArgs kept, if any.
func (c *callPairs) ReturnArgs(stack uint64, site int, pos uint64, t int64) (dur int64, args *entryArgs, ok bool) {
	sites := c.stacks[stack]
	open := sites[site]
	n := len(open)
	for n > 0 && open[n-1].pos < pos {
		n--
	}
	c.Dropped += uint64(len(open) - n)
	if n > 0 && open[n-1].pos == pos {
		dur, args, ok = t-open[n-1].time, open[n-1].args, true
		n--
	}
	if sites != nil {
		sites[site] = open[:n]
	}
	return dur, args, ok
}

// Forget drops every open call of a stack (its thread or goroutine ended).
func (c *callPairs) Forget(stack uint64) {
	for _, open := range c.stacks[stack] {
		c.Dropped += uint64(len(open))
	}
	delete(c.stacks, stack)
}
