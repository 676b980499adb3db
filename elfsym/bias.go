//go:build linux && amd64

package elfsym

import (
	"debug/elf"

	"github.com/utap/utap/internal/proc"
)

// Bias returns the load bias of object (an absolute path) in maps:
// runtime address = link-time address + bias (proc.Bias's one rule).
func Bias(maps []proc.Mapping, object string) (uint64, error) {
	o, err := cachedObject(object, object)
	if err != nil {
		return 0, err
	}
	return o.bias(maps)
}

func (o *object) bias(maps []proc.Mapping) (uint64, error) {
	loads := make([]elf.ProgHeader, len(o.loads))
	for i, p := range o.loads {
		loads[i] = p.ProgHeader
	}
	if b, ok := proc.BiasIn(maps, o.path, loads); ok {
		return b, nil
	}
	return 0, errorf(ErrNoObject, "%s is not mapped in the process", o.path)
}
