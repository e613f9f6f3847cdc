#!/usr/bin/env bash
# sampler.sh — how true the sampler's rate is, and what it costs per thread.
#
#  1. Real samples / requested at RATE Hz on 1, 4 and 64 threads, for each
#     mode of the agent (perf events, POSIX CPU timers) and for `perf record`
#     on the same program in the same invocation: requested = the CPU time
#     the threads used / the period.  Target with perf events: >= 0.95.
#  2. Thread creation: microseconds per thread created and joined (bench/churn.c),
#     plainly and under cbottleneck in each mode, and what the agent adds.
#     Target: <= 10 us added per thread.
#
# Medians of RUNS runs, the modes interleaved.  Not part of ctest.
# Usage: bench/sampler.sh [BUILD_DIR]      (default: build)
# Env: RUNS (5), RATE (999), THREADS ("1 4 64"), SECS (CPU seconds per thread, 1;
#      64 threads burn SECS/8 each),
#      CHURN (threads per churn run, 5000)
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
CBN="$BUILD/cbottleneck"
RUNS=${RUNS:-5}
RATE=${RATE:-999}
THREADS=${THREADS:-"1 4 64"}
SECS=${SECS:-1}
CHURN=${CHURN:-5000}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cbn-sampler.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

die() { echo "sampler.sh: $*" >&2; exit 1; }
[ -x "$CBN" ] || die "no launcher at $CBN; build first"
cc -std=c11 -D_GNU_SOURCE -O2 -g "$SRC/bench/burn.c" -o "$TMP/burn" -lpthread || die "cannot build burn.c"
cc -std=c11 -D_GNU_SOURCE -O2 -g "$SRC/bench/churn.c" -o "$TMP/churn" -lpthread || die "cannot build churn.c"
HAVE_PERF=1
perf record -q -F 99 -o "$TMP/probe.data" -- true >/dev/null 2>&1 || HAVE_PERF=0

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# cbn MODE N S: real/requested for one run of burn N S.
cbn_ratio() {
	local env=()
	[ "$1" = timers ] && env=(CBN_PERF_EVENTS=0)
	env "${env[@]}" "$CBN" -q -F "$RATE" --json "$TMP/r.json" --report /dev/null -- "$TMP/burn" "$2" "$3" ||
		die "cbottleneck run failed"
	python3 - "$TMP/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["run"]
cpu = r["measured_cpu_ns"] or r["cpu_ns"]
print("%.4f" % (r["samples"] / (cpu / r["period_ns"])))
PY
}

# perf N S: the same with perf record (cpu-clock): samples over the CPU time
# the samples' periods add up to.
perf_ratio() {
	perf record -q -F "$RATE" -e cpu-clock -o "$TMP/p.data" -- "$TMP/burn" "$1" "$2" 2>/dev/null >/dev/null
	perf script -i "$TMP/p.data" -F period 2>/dev/null |
		awk -v r="$RATE" '{ n++; c += $1 } END { if (c > 0) printf "%.4f\n", n / (c / 1e9 * r); else print "nan" }'
}

echo "== real samples / requested at $RATE Hz (median of $RUNS; requested = thread CPU / period)"
printf "%-8s %12s %12s %12s\n" threads "perf events" "POSIX timers" "perf record"
for n in $THREADS; do
	s=$(awk -v a="$SECS" -v n="$n" 'BEGIN { d = 1; if (n >= 64) d = 8; printf "%.4f", a / d }')
	: >"$TMP/perf_ev"; : >"$TMP/timers"; : >"$TMP/perf"
	for _ in $(seq "$RUNS"); do
		cbn_ratio perf "$n" "$s" >>"$TMP/perf_ev"
		cbn_ratio timers "$n" "$s" >>"$TMP/timers"
		[ "$HAVE_PERF" = 1 ] && perf_ratio "$n" "$s" >>"$TMP/perf"
	done
	p=$(median <"$TMP/perf_ev"); t=$(median <"$TMP/timers")
	q=$( [ "$HAVE_PERF" = 1 ] && median <"$TMP/perf" || echo "n/a")
	printf "%-8s %12s %12s %12s\n" "$n" "$p" "$t" "$q"
done

echo
echo "== thread creation: us per thread created and joined ($CHURN threads, median of $RUNS)"
: >"$TMP/c_plain"; : >"$TMP/c_perf"; : >"$TMP/c_timers"
for _ in $(seq "$RUNS"); do
	"$TMP/churn" "$CHURN" >>"$TMP/c_plain"
	"$CBN" -q --report /dev/null -- "$TMP/churn" "$CHURN" >>"$TMP/c_perf"
	CBN_PERF_EVENTS=0 "$CBN" -q --report /dev/null -- "$TMP/churn" "$CHURN" >>"$TMP/c_timers"
done
plain=$(median <"$TMP/c_plain"); perf_ev=$(median <"$TMP/c_perf"); timers=$(median <"$TMP/c_timers")
printf "%-14s %10s %10s\n" "" "us/thread" "added"
printf "%-14s %10.2f %10s\n" plain "$plain" "-"
printf "%-14s %10.2f %10.2f\n" "perf events" "$perf_ev" "$(awk -v a="$perf_ev" -v b="$plain" 'BEGIN { print a - b }')"
printf "%-14s %10.2f %10.2f\n" "POSIX timers" "$timers" "$(awk -v a="$timers" -v b="$plain" 'BEGIN { print a - b }')"
