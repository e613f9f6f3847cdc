#!/usr/bin/env bash
# attach.sh — what `cbottleneck --pid` costs the process it attaches to
# (docs/attach.md "Cost", issue target: <= 1.03x), next to `perf record -p
# PID --call-graph dwarf` at the same rate.  bench/fixed_work.c does a fixed
# amount of work, so time taken from it shows in its wall time; each run
# starts it, attaches (or not) at once, and times the program alone, from
# start to exit (the profiler's report comes after and is not counted):
#   plain     without a profiler
#   attached  cbottleneck -q -F FREQ --pid PID (until the process exits)
#   perf      perf record -F FREQ --call-graph dwarf -p PID (when perf is here)
# RUNS times each way, interleaved so drift hits them alike; prints the
# median wall of the program, the ratio to plain, and the profiler's own CPU.
# Not part of ctest.  Usage: bench/attach.sh [BUILD_DIR]   (default: build)
# Env: RUNS (5), SCALE (1), FREQ (999), SHAPE (threads: fixed_work's shape).
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
RUNS=${RUNS:-5}
SCALE=${SCALE:-1}
FREQ=${FREQ:-999}
SHAPE=${SHAPE:-threads}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cbn-attach.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

die() { echo "attach.sh: $*" >&2; exit 1; }
[ -x "$BUILD/cbottleneck" ] || die "no launcher at $BUILD/cbottleneck; build first"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (apt-get install time)"
case $RUNS in '' | *[!0-9]* | 0) die "RUNS must be a whole number >= 1" ;; esac
cc -std=c11 -D_GNU_SOURCE -O2 -g "$SRC/bench/fixed_work.c" -o "$TMP/fixed_work" -lpthread ||
	die "cannot build bench/fixed_work.c"
WAYS="plain attached"
command -v perf >/dev/null && WAYS="$WAYS perf"

now_ns() { date +%s%N; }

# run_one WAY: "program_wall_s profiler_cpu_s" appended to $TMP/t.WAY.
run_one()
{
	local way=$1 t0 t1 pid prof= rc=0
	t0=$(now_ns)
	"$TMP/fixed_work" "$SHAPE" "$SCALE" >/dev/null &
	pid=$!
	case $way in
	attached)
		/usr/bin/time -f "%U %S" -o "$TMP/cpu" "$BUILD/cbottleneck" -q -F "$FREQ" \
			--report /dev/null --pid "$pid" 2>"$TMP/err" &
		prof=$! ;;
	perf)
		/usr/bin/time -f "%U %S" -o "$TMP/cpu" perf record -q -F "$FREQ" --call-graph dwarf \
			-o "$TMP/perf.data" -p "$pid" >/dev/null 2>"$TMP/err" &
		prof=$! ;;
	esac
	wait "$pid" || rc=$?
	t1=$(now_ns)
	[ "$rc" = 0 ] || die "fixed_work, $way: failed (exit $rc)"
	if [ -n "$prof" ]; then
		# perf record -p exits non-zero now and then when the process ends
		# under it; the program's time still counts.
		wait "$prof" || echo "attach.sh: $way: the profiler exited $?: $(head -n 1 "$TMP/err")" >&2
		echo "$(( (t1 - t0) / 1000 ))e-6 $(awk '{ print $1 + $2 }' "$TMP/cpu")" >>"$TMP/t.$way"
	else
		echo "$(( (t1 - t0) / 1000 ))e-6 0" >>"$TMP/t.$way"
	fi
}

echo "attach.sh: $RUNS runs each way, fixed_work $SHAPE $SCALE, $FREQ Hz"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), Linux $(uname -r), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < RUNS; i++)); do
	for way in $WAYS; do
		run_one "$way"
	done
done

# median FILE COLUMN
median() { awk -v c="$2" '{ print $c }' "$1" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

plain=$(median "$TMP/t.plain" 1)
printf "%-9s %10s %10s %14s\n" way wall_s wall/plain profiler_cpu_s
for way in $WAYS; do
	w=$(median "$TMP/t.$way" 1)
	c=$(median "$TMP/t.$way" 2)
	printf "%-9s %10.3f %10.3f %14.3f\n" "$way" "$w" "$(awk -v a="$w" -v b="$plain" 'BEGIN { print a / b }')" "$c"
done
