#!/usr/bin/env bash
# offcpu.sh — what --off-cpu costs on top of CPU sampling (docs/waiting.md
# "Cost", target: <= 5 % more wall and CPU than sampling alone).  Two programs
# doing a fixed amount of work, so stolen time shows in wall and CPU alike:
#   lock     bench/offcpu_lock.c: 4 threads on one mutex, blocking in futex
#   syscall  bench/offcpu_syscall.c: a pipe ping-pong (blocking reads) and
#            short sleeps and polls
# each run RUNS times each way, the ways interleaved so drift hits them alike:
#   plain      without the profiler
#   sampled    the agent preloaded, CPU sampling at FREQ Hz (cbottleneck's default)
#   offcpu     the same with the wall sampler at 100 Hz (--off-cpu)
#   offcpu1k   the same at 1000 Hz (--off-cpu=1000, the highest rate)
# and prints the median wall and CPU (user+sys) times of each, the ratios to
# plain and to sampled.  The agent is preloaded directly, with the environment
# the launcher gives it (CBN_SESSION, CBN_FREQ, CBN_OFFCPU): the launcher's
# start-up and report are not the recording's cost.
# Not part of ctest.  Usage: bench/offcpu.sh [BUILD_DIR]   (default: build)
# Env: RUNS (7), SCALE (1), FREQ (999), THREADS (4: offcpu_lock's threads).
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
AGENT="$BUILD/lib/libcbottleneck.so"
RUNS=${RUNS:-7}
SCALE=${SCALE:-1}
FREQ=${FREQ:-999}
THREADS=${THREADS:-4}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cbn-offcpu.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

die() { echo "offcpu.sh: $*" >&2; exit 1; }
[ -e "$AGENT" ] || die "no agent at $AGENT; build first (cmake --build $BUILD)"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (apt-get install time)"
case $RUNS in '' | *[!0-9]* | 0) die "RUNS must be a whole number >= 1" ;; esac
# Built like the examples: -O2 -g, no frame pointers forced.
for p in offcpu_lock offcpu_syscall; do
	cc -std=c11 -D_GNU_SOURCE -O2 -g "$SRC/bench/$p.c" -o "$TMP/$p" -lpthread ||
		die "cannot build bench/$p.c"
done

now_ns() { date +%s%N; }

# run_one WAY PROG: one run, "wall_s cpu_s" appended to $TMP/t.PROG.WAY.
run_one()
{
	local way=$1 prog=$2 t0 t1 rc=0
	local -a env=() cmd
	rm -rf "$TMP/s"
	mkdir -p "$TMP/s"
	case $way in
	sampled) env=(LD_PRELOAD="$AGENT" CBN_SESSION="$TMP/s" CBN_FREQ="$FREQ") ;;
	offcpu) env=(LD_PRELOAD="$AGENT" CBN_SESSION="$TMP/s" CBN_FREQ="$FREQ" CBN_OFFCPU=100) ;;
	offcpu1k) env=(LD_PRELOAD="$AGENT" CBN_SESSION="$TMP/s" CBN_FREQ="$FREQ" CBN_OFFCPU=1000) ;;
	esac
	case $prog in
	lock) cmd=("$TMP/offcpu_lock" "$SCALE" "$THREADS") ;;
	syscall) cmd=("$TMP/offcpu_syscall" "$SCALE") ;;
	esac
	t0=$(now_ns)
	/usr/bin/time -f "%U %S" -o "$TMP/cpu" env "${env[@]}" "${cmd[@]}" >/dev/null 2>"$TMP/err" || rc=$?
	t1=$(now_ns)
	[ "$rc" = 0 ] || die "$prog, $way: failed (exit $rc): $(head -n 3 "$TMP/err")"
	echo "$(( (t1 - t0) / 1000 ))e-6 $(awk '{ print $1 + $2 }' "$TMP/cpu")" >>"$TMP/t.$prog.$way"
}

WAYS="plain sampled offcpu offcpu1k"
echo "offcpu.sh: $RUNS runs each way, SCALE=$SCALE, CPU sampling at $FREQ Hz, offcpu_lock on $THREADS threads"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), Linux $(uname -r), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < RUNS; i++)); do
	for prog in lock syscall; do
		for way in $WAYS; do
			run_one "$way" "$prog"
		done
	done
done

# median FILE COLUMN
median() { awk -v c="$2" '{ print $c }' "$1" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf "%-8s %-9s %8s %8s %10s %10s %12s %12s\n" prog way wall_s cpu_s wall/plain cpu/plain \
	wall/sampled cpu/sampled
for prog in lock syscall; do
	pw=$(median "$TMP/t.$prog.plain" 1)
	pc=$(median "$TMP/t.$prog.plain" 2)
	sw=$(median "$TMP/t.$prog.sampled" 1)
	sc=$(median "$TMP/t.$prog.sampled" 2)
	for way in $WAYS; do
		w=$(median "$TMP/t.$prog.$way" 1)
		c=$(median "$TMP/t.$prog.$way" 2)
		awk -v p="$prog" -v n="$way" -v w="$w" -v c="$c" -v pw="$pw" -v pc="$pc" -v sw="$sw" \
			-v sc="$sc" 'BEGIN {
			printf "%-8s %-9s %8.3f %8.3f %10.4f %10.4f %12.4f %12.4f\n", p, n, w, c,
				w / pw, c / pc, w / sw, c / sc }'
	done
	awk '{ print $1 }' "$TMP/t.$prog.plain" | sort -g | awk -v p="$prog" '{ v[NR] = $1 } END {
		printf "%-8s noise floor: plain wall from %.3f to %.3f s over %d runs\n", p, v[1], v[NR], NR }'
done
echo "target: --off-cpu (100 Hz) adds <= 5 % wall and CPU to sampling alone (the wall/sampled, cpu/sampled columns of offcpu)"
