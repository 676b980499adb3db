//go:build linux && amd64

package compare

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// IdleFuncs is how many never-called functions the C workload carries, for
// the installed-probes scaling rows (1 target + 999 idle = 1,000 probes).
const IdleFuncs = 999

// cSource is the C workload. It is written out and built at run time, so
// utap ships no binaries and no C file sits in a Go package directory.
func cSource() string {
	var b strings.Builder
	b.WriteString(`// utap compare workload: usage: BIN CALLS THREADS call|syscall|syscallmix|usdt|wait
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if __has_include(<sys/sdt.h>)
#include <sys/sdt.h>
#define HAVE_SDT 1
#endif

// The empty asm keeps the call and the function's body; noinline keeps a
// real call the probes can see.
__attribute__((noinline)) long utap_workload_target(long a, long b) {
	__asm__ volatile("" ::: "memory");
	return a * 2 + b;
}

// Never called (but in wait mode): probes on these cost installation,
// never a hit.
`)
	for i := 0; i < IdleFuncs; i++ {
		fmt.Fprintf(&b, "__attribute__((noinline, used)) long %s(long a) { __asm__ volatile(\"\" ::: \"memory\"); return a + %d; }\n", idleName(i), i)
	}
	b.WriteString("static long (*const idle[])(long) = {\n")
	for i := 0; i < IdleFuncs; i++ {
		fmt.Fprintf(&b, "\t%s,\n", idleName(i))
	}
	fmt.Fprintf(&b, "};\nstatic const long nidle = %d;\n", IdleFuncs)
	b.WriteString(`
static long calls, nthreads, syscalls, usdt, mix, other;
static long sums[1024];

static void *worker(void *p) {
	long id = (long)p, s = 0;
	for (long j = id; j < calls; j += nthreads) {
		if (other)
			s += getuid() != (uid_t)-1; // the probed getppid never comes
		else if (syscalls) {
			s += getppid() > 0;
			for (long k = 0; k < mix; k++)
				s += getuid() == (uid_t)-1; // never true: the sum stays calls
		}
#ifdef HAVE_SDT
		else if (usdt) {
			// A static probe where the call would be: a nop the tracer
			// probes; the arguments are what the call's would be.
			DTRACE_PROBE2(utap, tick, j, 7);
			s += j * 2 + 7;
		}
#endif
		else
			s += utap_workload_target(j, 7);
	}
	sums[id] = s;
	return NULL;
}

int main(int argc, char **argv) {
	if (argc < 4) {
		fprintf(stderr, "usage: %s CALLS THREADS call|syscall|wait\n", argv[0]);
		return 2;
	}
	calls = atol(argv[1]);
	nthreads = atol(argv[2]);
	mix = strcmp(argv[3], "syscallmix") == 0 ? ` + strconv.Itoa(MixUntraced) + ` : 0;
	other = strcmp(argv[3], "syscallother") == 0;
	syscalls = strcmp(argv[3], "syscall") == 0 || mix;
	usdt = strcmp(argv[3], "usdt") == 0;
#ifndef HAVE_SDT
	if (usdt)
		return 5; // built without sys/sdt.h
#endif
	if (nthreads < 1 || nthreads > 1024)
		return 2;
	if (strcmp(argv[3], "wait") == 0) {
		// Tracers attach and detach while this waits; then every probed
		// function runs once: a breakpoint left behind kills the process.
		char line[16];
		if (fgets(line, sizeof line, stdin) == NULL)
			return 4;
		for (long i = 0; i < nidle; i++)
			if (idle[i](1) != 1 + i)
				return 3;
	}
	pthread_t th[1024];
	for (long i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i) != 0)
			return 1;
	long s = 0;
	for (long i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		s += sums[i];
	}
	printf("%ld\n", s);
	return 0;
}
`)
	return b.String()
}

// hasSDT says whether the workload was built with its static probe (a
// .note.stapsdt section: sys/sdt.h was there).
func hasSDT(exe string) bool {
	f, err := elf.Open(exe)
	if err != nil {
		return false
	}
	defer f.Close()
	return f.Section(".note.stapsdt") != nil
}

func idleName(i int) string { return fmt.Sprintf("utap_workload_idle_%04d", i) }

// BuildC compiles the C workload with cc into dir (reused when the source
// has not changed) and describes it.
func BuildC(cc, dir string) (*Workload, error) {
	src := cSource()
	sum := sha256.Sum256([]byte(cc + "\x00" + src))
	base := filepath.Join(dir, "utap-compare-workload-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(base); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(base+".c", []byte(src), 0o644); err != nil {
			return nil, err
		}
		tmp := base + ".tmp" + strconv.Itoa(os.Getpid())
		out, err := exec.Command(cc, "-O1", "-g", "-pthread", "-o", tmp, base+".c").CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("building the C workload with %s: %v\n%s", cc, err, out)
		}
		if err := os.Rename(tmp, base); err != nil {
			return nil, err
		}
	}
	idle := make([]string, IdleFuncs)
	for i := range idle {
		idle[i] = idleName(i)
	}
	return &Workload{
		Name: "C: built at run time with " + cc + " -O1",
		Exe:  base,
		Args: func(calls string, threads int, mode string) []string {
			return []string{calls, strconv.Itoa(threads), mode}
		},
		Target: "utap_workload_target",
		Idle:   idle,
		Regs:   [2]string{"di", "si"},
		Ret:    "ax",
		Libc:   true,
		USDT:   hasSDT(base),
	}, nil
}
