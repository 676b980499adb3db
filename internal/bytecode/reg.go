package bytecode

import "github.com/utap/utap/probe"

// regNames are the registers a probe.Reg may name; an opReg's immediate
// indexes it, so that the program carries no string.
var regNames = [...]string{
	"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip",
}

// regIndex is name's index in regNames, -1 for a name that is not there.
func regIndex(name string) int {
	for i, n := range regNames {
		if n == name {
			return i
		}
	}
	return -1
}

// readReg reads register regNames[i] through env; a register env cannot
// give faults the evaluation, as the reference's error does.
func readReg(env probe.Env, i int) (uint64, error) {
	if i < 0 || i >= len(regNames) {
		return 0, ErrFault
	}
	v, err := env.Reg(regNames[i])
	if err != nil {
		return 0, ErrFault
	}
	return v, nil
}
