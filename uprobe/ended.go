//go:build linux && amd64

package uprobe

import (
	"encoding/binary"
	"os"
	"strconv"
)

// endedWithThread counts the calls left in the entry-time map whose
// thread is gone: it ended inside them (exit(), a fatal signal, an exec),
// so they never return, as the trace shows ("<no return ...>"), and are
// not returns lost. A call a longjmp left before its thread ended is
// counted here too: from the map the two look alike. A goroutine's calls
// are keyed by its g, not a thread, and are never counted.
func (s *session) endedWithThread() uint64 {
	if s.objs.times == nil {
		return 0
	}
	var key [keySize]byte
	val := make([]byte, timesValueSize)
	n := uint64(0)
	it := s.objs.times.Iterate()
	for it.Next(&key, &val) {
		cookie := binary.LittleEndian.Uint64(key[8:])
		if cookie >= uint64(len(s.sites.sites)) || s.sites.site(cookie).GoFunc {
			continue
		}
		pt := binary.LittleEndian.Uint64(key[:8])
		if _, err := os.Stat("/proc/" + strconv.FormatUint(pt>>32, 10) + "/task/" + strconv.FormatUint(uint64(uint32(pt)), 10)); os.IsNotExist(err) {
			n++
		}
	}
	return n
}
