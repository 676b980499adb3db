//go:build linux && amd64

package syscalls

import "sort"

//go:generate go run ./internal/gen -o zsyscalls_amd64.go

// rawCall and rawArg are the generated table's rows (zsyscalls_amd64.go).
type rawCall struct {
	Nr   int
	Name string
	Args []rawArg
	Hand bool // no tracepoint format: arguments from gen's hand list
	// Tracepoint names its syscalls:sys_enter_NAME and sys_exit_NAME
	// events ("newstat" for stat), "" when the kernel has none.
	Tracepoint string
}

type rawArg struct{ Name, CType string }

// straceMaxNr is the highest number strace 6.1 knows
// (set_mempolicy_home_node); it shows later calls as syscall_0x...
const straceMaxNr = 450

var (
	infos  []*Info // by number
	byNr   []*Info // indexed by number, nil for none
	byName = map[string]*Info{}
)

func init() {
	for _, r := range rawTable {
		in := &Info{Nr: r.Nr, Name: r.Name, Tracepoint: r.Tracepoint}
		kinds := argKinds[r.Name]
		for i, a := range r.Args {
			k, ok := kinds[i]
			if !ok {
				k = kindOf(a)
			}
			if _, ok := argXlats[r.Name][i]; ok {
				k = KindXlat
			}
			in.Args = append(in.Args, Arg{Name: a.Name, CType: a.CType, Kind: k})
		}
		in.Captures = capturesFor(in)
		in.Classes = classesOf(in)
		in.NoReturn = noReturn[r.Name]
		// special.go's init has run: files init in name order.
		in.special = special[r.Name]
		in.plainResult = !hexReturners[r.Name] && !fdResult[r.Name] && !decodedResult[r.Name]
		infos = append(infos, in)
		byName[in.Name] = in
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Nr < infos[j].Nr })
	byNr = make([]*Info, infos[len(infos)-1].Nr+1)
	for _, in := range infos {
		byNr[in.Nr] = in
	}
}

var noReturn = set("exit", "exit_group")

// Lookup returns the call numbered nr, nil if unknown.
func Lookup(nr int) *Info {
	if nr < 0 || nr >= len(byNr) {
		return nil
	}
	return byNr[nr]
}

// ByName returns the call named name (strace's name), nil if unknown.
func ByName(name string) *Info { return byName[name] }

// All returns every call, by number. The slice is shared: do not modify.
func All() []*Info { return infos }

// displayName is the name strace 6.1 prints.
func (i *Info) displayName() string {
	if i.Nr > straceMaxNr {
		return "syscall_" + hex(uint64(i.Nr))
	}
	return i.Name
}

// isOut reports whether argument a is written by the kernel.
func (i *Info) isOut(a int) bool {
	for _, o := range outArgs[i.Name] {
		if o == a {
			return true
		}
	}
	return false
}

// capture returns the index in Captures of argument a's capture on the
// given side, -1 if none.
func (i *Info) capture(a int, exit bool) int {
	for n, c := range i.Captures {
		if c.Arg == a && c.Exit == exit {
			return n
		}
	}
	return -1
}

// ShowDirents has getdents' buffers captured whole, every entry shown
// (strace -v, -e abbrev=none), not counted past their first bytes.
func ShowDirents() {
	for _, in := range infos {
		for i := range in.Captures {
			in.Captures[i].Counted = false
		}
	}
}

// ShowEnvironments has execve's and execveat's environments captured as
// strings rather than counted (strace -v, -e abbrev=none): a display
// choice the CLI makes once, before an engine reads the table.
func ShowEnvironments() {
	for _, in := range infos {
		for i, c := range in.Captures {
			if c.StrArray && c.CountOnly {
				in.Captures[i].CountOnly = false
			}
		}
	}
}
