#!/usr/bin/env bash
# Soak (by hand, not in CI): one attached trace per engine for DURATION
# (default 1h) of 8 threads calling a probed function hot, with -c; the
# tracer's RSS is sampled every 10 s into soak-ENGINE.csv. Run as root from
# any directory (the CSVs are written there): scripts/soak.sh [DURATION_SECONDS]
set -euo pipefail
secs=${1:-3600}
dir=$(mktemp -d)
cat >"$dir/soak.c" <<'C'
#include <pthread.h>
#include <time.h>
__attribute__((noinline)) long work(long a, long b) { __asm__ volatile(""); return a + b; }
static void *loop(void *arg) {
	struct timespec ts = {0, 1000000}; /* 2 calls a ms: 8 x 2k calls/s in all */
	for (long i = 0;; i++) {
		work((long)arg, i);
		if (i % 2 == 0) nanosleep(&ts, 0);
	}
	return 0;
}
int main(void) {
	pthread_t t[8];
	for (long i = 0; i < 8; i++) pthread_create(&t[i], 0, loop, (void *)i);
	pthread_join(t[0], 0);
}
C
gcc -O1 -pthread -o "$dir/soak" "$dir/soak.c"
(cd "$(dirname "$0")/.." && go build -o "$dir/utap" ./cmd/utap)
for engine in ptrace uprobe; do
	"$dir/soak" & tracee=$!
	"$dir/utap" attach -q -c --backend "$engine" -p "$tracee" -e work --duration "${secs}s" >"soak-$engine.summary" 2>&1 &
	sup=$!
	sleep 1
	tracer=$(pgrep -P "$sup" | head -1)
	(
		echo "seconds,rss_kib"
		for ((t = 0; t <= secs; t += 10)); do
			echo "$t,$(awk '/^VmRSS/ {print $2}' /proc/"$tracer"/status 2>/dev/null || echo gone)"
			sleep 10
		done
	) >"soak-$engine.csv" &
	echo "$engine: tracee $tracee, utap $sup, tracer $tracer"
	pids+=("$tracee:$sup")
done
wait_all() { for p in "${pids[@]}"; do wait "${p#*:}" || echo "utap ${p#*:} exited $?"; kill "${p%:*}"; done; }
wait_all
wait
echo "RSS samples: soak-ptrace.csv soak-uprobe.csv; summaries: soak-*.summary"
