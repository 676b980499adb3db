//go:build linux && amd64

// Command gen writes zsyscalls_amd64.go: every linux/amd64 system call with
// its number (from golang.org/x/sys/unix) and arguments (from the kernel's
// tracepoint formats). It runs once, by hand (go generate), on a machine with
// tracefs mounted; the output is committed so builds never need tracefs.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/format"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

type arg struct{ name, ctype string }

type sc struct {
	nr   int
	name string
	args []arg
	// guessed: no tracepoint format; arity from the hand list.
	guessed bool
	tp      string // its tracepoints' name (sys_enter_TP), "" when none
}

// noFormat gives the arguments of calls the kernel has no tracepoint for
// (they are not built with SYSCALL_DEFINE, or are compiled out here).
var noFormat = map[string][]arg{
	"rt_sigreturn":     {},
	"fork":             {},
	"vfork":            {},
	"getpid":           {},
	"uselib":           {{"library", "const char *"}},
	"create_module":    {{"name", "const char *"}, {"size", "size_t"}},
	"get_kernel_syms":  {{"table", "void *"}},
	"query_module":     {{"name", "const char *"}, {"which", "int"}, {"buf", "void *"}, {"bufsize", "size_t"}, {"ret", "size_t *"}},
	"nfsservctl":       {{"cmd", "int"}, {"argp", "void *"}, {"resp", "void *"}},
	"getpmsg":          {{"a0", "unsigned long"}, {"a1", "unsigned long"}, {"a2", "unsigned long"}, {"a3", "unsigned long"}, {"a4", "unsigned long"}},
	"putpmsg":          {{"a0", "unsigned long"}, {"a1", "unsigned long"}, {"a2", "unsigned long"}, {"a3", "unsigned long"}, {"a4", "unsigned long"}},
	"afs_syscall":      {{"a0", "unsigned long"}, {"a1", "unsigned long"}, {"a2", "unsigned long"}, {"a3", "unsigned long"}, {"a4", "unsigned long"}},
	"tuxcall":          {{"a0", "unsigned long"}, {"a1", "unsigned long"}, {"a2", "unsigned long"}},
	"security":         {{"a0", "unsigned long"}, {"a1", "unsigned long"}, {"a2", "unsigned long"}},
	"vserver":          {{"a0", "unsigned long"}, {"a1", "unsigned long"}, {"a2", "unsigned long"}, {"a3", "unsigned long"}, {"a4", "unsigned long"}},
	"epoll_ctl_old":    {{"epfd", "int"}, {"op", "int"}, {"fd", "int"}, {"event", "struct epoll_event *"}},
	"epoll_wait_old":   {{"epfd", "int"}, {"events", "struct epoll_event *"}, {"maxevents", "int"}},
	"_sysctl":          {{"args", "struct __sysctl_args *"}},
	"modify_ldt":       {{"func", "int"}, {"ptr", "void *"}, {"bytecount", "unsigned long"}},
	"arch_prctl":       {{"option", "int"}, {"arg2", "unsigned long"}},
	"iopl":             {{"level", "unsigned int"}},
	"ioperm":           {{"from", "unsigned long"}, {"num", "unsigned long"}, {"turn_on", "int"}},
	"mmap":             {{"addr", "unsigned long"}, {"len", "unsigned long"}, {"prot", "unsigned long"}, {"flags", "unsigned long"}, {"fd", "unsigned long"}, {"off", "unsigned long"}},
	"clone":            {{"clone_flags", "unsigned long"}, {"newsp", "unsigned long"}, {"parent_tidptr", "int *"}, {"child_tidptr", "int *"}, {"tls", "unsigned long"}},
	"lookup_dcookie":   {{"cookie64", "u64"}, {"buf", "char *"}, {"len", "size_t"}},
	"sysfs":            {{"option", "int"}, {"arg1", "unsigned long"}, {"arg2", "unsigned long"}},
	"ustat":            {{"dev", "unsigned"}, {"ubuf", "struct ustat *"}},
	"_exit":            {{"error_code", "int"}},
	"pkey_mprotect":    {{"start", "unsigned long"}, {"len", "size_t"}, {"prot", "unsigned long"}, {"pkey", "int"}},
	"pkey_alloc":       {{"flags", "unsigned long"}, {"init_val", "unsigned long"}},
	"pkey_free":        {{"pkey", "int"}},
	"init_module":      {{"umod", "void *"}, {"len", "unsigned long"}, {"uargs", "const char *"}},
	"delete_module":    {{"name_user", "const char *"}, {"flags", "unsigned int"}},
	"set_thread_area":  {{"u_info", "struct user_desc *"}},
	"get_thread_area":  {{"u_info", "struct user_desc *"}},
	"kexec_load":       {{"entry", "unsigned long"}, {"nr_segments", "unsigned long"}, {"segments", "struct kexec_segment *"}, {"flags", "unsigned long"}},
	"finit_module":     {{"fd", "int"}, {"uargs", "const char *"}, {"flags", "int"}},
	"kexec_file_load":  {{"kernel_fd", "int"}, {"initrd_fd", "int"}, {"cmdline_len", "unsigned long"}, {"cmdline_ptr", "const char *"}, {"flags", "unsigned long"}},
	"map_shadow_stack": {{"addr", "unsigned long"}, {"size", "unsigned long"}, {"flags", "unsigned int"}},
}

// tpNames are tracepoint names that differ from x/sys's (the kernel's
// "new" variants of old-ABI calls).
var tpNames = map[string]string{
	"stat": "newstat", "lstat": "newlstat", "fstat": "newfstat", "uname": "newuname",
	"sendfile": "sendfile64", "umount2": "umount",
}

var sysRe = regexp.MustCompile(`^\s*SYS_([A-Z0-9_]+)\s*=\s*(\d+)`)

func main() {
	out := flag("-o", "zsyscalls_amd64.go")
	tracefs := "/sys/kernel/tracing/events/syscalls"
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "golang.org/x/sys").Output()
	if err != nil {
		log.Fatalf("go list golang.org/x/sys: %v", err)
	}
	f, err := os.Open(filepath.Join(strings.TrimSpace(string(dir)), "unix", "zsysnum_linux_amd64.go"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	var all []sc
	s := bufio.NewScanner(f)
	for s.Scan() {
		m := sysRe.FindStringSubmatch(s.Text())
		if m == nil {
			continue
		}
		nr, _ := strconv.Atoi(m[2])
		c := sc{nr: nr, name: strings.ToLower(m[1])}
		tp := c.name
		if n, ok := tpNames[tp]; ok {
			tp = n
		}
		args, err := readFormat(filepath.Join(tracefs, "sys_enter_"+tp, "format"))
		if err != nil {
			hand, ok := noFormat[c.name]
			if !ok {
				log.Printf("%s: no tracepoint format and no hand entry; 6 unnamed args", c.name)
				hand = make([]arg, 6)
				for i := range hand {
					hand[i] = arg{fmt.Sprintf("arg%d", i), "unsigned long"}
				}
			}
			args, c.guessed = hand, true
		} else {
			c.tp = tp
		}
		c.args = args
		all = append(all, c)
	}
	if err := s.Err(); err != nil {
		log.Fatal(err)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].nr < all[j].nr })

	var b bytes.Buffer
	b.WriteString("// Code generated by internal/gen from the kernel's tracepoint formats and golang.org/x/sys/unix; DO NOT EDIT.\n\n")
	b.WriteString("//go:build linux && amd64\n\npackage syscalls\n\n")
	b.WriteString("// rawTable is every system call: number, name, and the arguments'\n// names and C types, and its tracepoints' name. Entries marked hand had no tracepoint format.\n")
	b.WriteString("var rawTable = []rawCall{\n")
	for _, c := range all {
		fmt.Fprintf(&b, "{%d, %q, []rawArg{", c.nr, c.name)
		for i, a := range c.args {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "{%q, %q}", a.name, a.ctype)
		}
		fmt.Fprintf(&b, "}, %v, %q},\n", c.guessed, c.tp)
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}

// flag returns the value after name in os.Args, or def.
func flag(name, def string) string {
	for i, a := range os.Args {
		if a == name && i+1 < len(os.Args) {
			return os.Args[i+1]
		}
	}
	return def
}

// readFormat returns the arguments of one sys_enter format file: the
// field lines after __syscall_nr.
func readFormat(path string) ([]arg, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var args []arg
	seenNr := false
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "field:") {
			continue
		}
		decl, _, _ := strings.Cut(strings.TrimPrefix(line, "field:"), ";")
		if strings.Contains(decl, "__syscall_nr") {
			seenNr = true
			continue
		}
		if !seenNr {
			continue
		}
		i := strings.LastIndexAny(decl, " *")
		args = append(args, arg{name: decl[i+1:], ctype: strings.TrimSpace(decl[:i+1])})
	}
	return args, nil
}
