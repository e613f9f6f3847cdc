#!/usr/bin/env bash
# steps.sh — what the agent costs outside capture windows (docs/steps.md,
# target: <= 0.5 % CPU).  A CPU-bound multi-threaded program doing a fixed
# amount of work (tests/agent/progs/capture_app work: N million iterations on
# each of THREADS+1 threads) runs RUNS times each way, the ways interleaved so
# drift hits them alike:
#   plain     without the profiler
#   parked    the agent preloaded with --capture-range api (CBN_CAPTURE_RANGE=api)
#             and no cbn_start(): never recording, every sampler parked
#   recording the agent preloaded without controls, for scale
# and prints the median wall and CPU (user+sys) times of each, and the ratios
# parked/plain and recording/plain.  The agent is preloaded directly (no
# launcher: its start-up and report are not the recording's cost).  The agent
# still starts up (session file, module map, private libunwind: some 10-40 ms
# here), a fixed cost that has nothing to do with windows: each way also runs
# with no work (ITERS=0), and the steady ratios subtract those medians.
# Not part of ctest.  Usage: bench/steps.sh [BUILD_DIR]   (default: build)
# Env: RUNS (7), THREADS (3), ITERS (300: million iterations per thread),
#      FREQ (1000: CBN_FREQ of the agent runs).
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
AGENT="$BUILD/lib/libcbottleneck.so"
APP="$BUILD/tests/agent/progs/capture_app"
RUNS=${RUNS:-7}
THREADS=${THREADS:-3}
ITERS=${ITERS:-300}
FREQ=${FREQ:-1000}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cbn-steps.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

die() { echo "steps.sh: $*" >&2; exit 1; }
[ -e "$AGENT" ] || die "no agent at $AGENT; build first (cmake --build $BUILD)"
[ -x "$APP" ] || die "no $APP; build first (cmake --build $BUILD)"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (apt-get install time)"
case $RUNS in '' | *[!0-9]* | 0) die "RUNS must be a whole number >= 1" ;; esac

now_ns() { date +%s%N; }

# run_one WAY ITERS: one run, "wall_s cpu_s" appended to $TMP/t.WAY.ITERS.
run_one()
{
	local way=$1 iters=$2 t0 t1 rc=0
	local -a env=()
	rm -rf "$TMP/s"
	mkdir -p "$TMP/s"
	case $way in
	parked) env=(LD_PRELOAD="$AGENT" CBN_SESSION="$TMP/s" CBN_FREQ="$FREQ" CBN_CAPTURE_RANGE=api) ;;
	recording) env=(LD_PRELOAD="$AGENT" CBN_SESSION="$TMP/s" CBN_FREQ="$FREQ") ;;
	esac
	t0=$(now_ns)
	/usr/bin/time -f "%U %S" -o "$TMP/cpu" env "${env[@]}" "$APP" work "$THREADS" "$iters" \
		>/dev/null 2>"$TMP/err" || rc=$?
	t1=$(now_ns)
	[ "$rc" = 0 ] || die "$way run failed (exit $rc): $(head -n 3 "$TMP/err")"
	echo "$(( (t1 - t0) / 1000 ))e-6 $(awk '{ print $1 + $2 }' "$TMP/cpu")" >>"$TMP/t.$way.$iters"
}

echo "steps.sh: capture_app work $THREADS $ITERS ($((THREADS + 1)) threads x $ITERS M iterations), $RUNS runs each, agent at $FREQ Hz"
for ((i = 0; i < RUNS; i++)); do
	for way in plain parked recording; do
		run_one "$way" "$ITERS"
		run_one "$way" 0
	done
done

# median FILE COLUMN
median() { awk -v c="$2" '{ print $c }' "$1" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

pw=$(median "$TMP/t.plain.$ITERS" 1)
pc=$(median "$TMP/t.plain.$ITERS" 2)
pw0=$(median "$TMP/t.plain.0" 1)
pc0=$(median "$TMP/t.plain.0" 2)
printf "%-10s %9s %9s %10s %10s %9s %9s %12s %12s\n" way wall_s cpu_s wall/plain cpu/plain \
	wall0_s cpu0_s steady_wall steady_cpu
for way in plain parked recording; do
	w=$(median "$TMP/t.$way.$ITERS" 1)
	c=$(median "$TMP/t.$way.$ITERS" 2)
	w0=$(median "$TMP/t.$way.0" 1)
	c0=$(median "$TMP/t.$way.0" 2)
	awk -v n="$way" -v w="$w" -v c="$c" -v w0="$w0" -v c0="$c0" -v pw="$pw" -v pc="$pc" \
		-v pw0="$pw0" -v pc0="$pc0" 'BEGIN {
		printf "%-10s %9.3f %9.3f %10.4f %10.4f %9.3f %9.3f %12.4f %12.4f\n", n, w, c, w / pw,
			c / pc, w0, c0, (w - w0) / (pw - pw0), (c - c0) / (pc - pc0) }'
done
awk -v c="$(median "$TMP/t.parked.$ITERS" 2)" -v c0="$(median "$TMP/t.parked.0" 2)" \
	-v pc="$pc" -v pc0="$pc0" 'BEGIN {
	printf "outside windows, steady: %+.2f %% CPU (target <= 0.5 %%)\n", ((c - c0) / (pc - pc0) - 1) * 100 }'
awk '{ print $2 }' "$TMP/t.plain.$ITERS" | sort -g |
	awk '{ v[NR] = $1 } END { printf "noise floor: plain CPU from %.3f to %.3f s over %d runs\n", v[1], v[NR], NR }'
