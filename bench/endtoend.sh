#!/usr/bin/env bash
# endtoend.sh — what a user waits for: the wall time of the whole command
# `cbottleneck -F 999 PROG` (start-up, recording, symbolization, report) over
# the wall time of `PROG` alone, on programs of about one second, with the
# symbol cache cold (an empty cache directory for every run) and warm (a cache
# directory the same program has been reported from once).  Median of RUNS runs,
# all variants interleaved so drift hits them alike.
#
# Programs: bench/fixed_work.c (the CPU examples' shapes, a fixed amount of
# work), Debian's python3 running a 1-second loop, and bzip2 -9 over enough
# data for about a second (both dynamically linked, stripped, their debug info
# from /usr/lib/debug when a -dbg package is installed; libc6-dbg makes the
# cold case cost what it costs on a developer's machine).
# Not part of ctest.  Usage: bench/endtoend.sh [BUILD_DIR]   (default: build)
# Env: RUNS (5), FREQ (999), PROGS ("fixed python bzip2").
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
CBN="$BUILD/cbottleneck"
RUNS=${RUNS:-5}
FREQ=${FREQ:-999}
PROGS=${PROGS:-"fixed python bzip2"}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cbn-e2e-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

die() { echo "endtoend.sh: $*" >&2; exit 1; }
[ -x "$CBN" ] || die "no launcher at $CBN; build first"

cc -std=c11 -D_GNU_SOURCE -O2 -g "$SRC/bench/fixed_work.c" -o "$TMP/fixed_work" -lpthread ||
	die "cannot build bench/fixed_work.c"
cat >"$TMP/loop.py" <<'EOF'
import time
t = time.process_time()
x = 0
while time.process_time() - t < 1.0:
    for i in range(10000):
        x += i * i % 7
EOF

now_ns() { date +%s%N; }

# Calibrate inputs to about one second of the program alone.
calibrate_fixed() {
	local scale=1 t0 t1
	while :; do
		t0=$(now_ns); "$TMP/fixed_work" split "$scale" >/dev/null; t1=$(now_ns)
		(( (t1 - t0) >= 600000000 || scale >= 4096 )) && break
		scale=$((scale * 2))
	done
	echo "$scale"
}

declare -A CMD
for p in $PROGS; do
	case $p in
	fixed)
		s=$(calibrate_fixed)
		CMD[$p]="$TMP/fixed_work split $s" ;;
	python)
		[ -x /usr/bin/python3 ] || { echo "skip python: /usr/bin/python3 missing"; continue; }
		CMD[$p]="/usr/bin/python3 $TMP/loop.py" ;;
	bzip2)
		command -v bzip2 >/dev/null || { echo "skip bzip2: not installed"; continue; }
		# 12 MB of mixed text: ~1 s of bzip2 -9 here.
		python3 - "$TMP/data" <<'EOF'
import random, sys
random.seed(7)
words = [''.join(random.choice('abcdefghijklmnop') for _ in range(random.randint(2, 9))) for _ in range(4000)]
with open(sys.argv[1], 'w') as f:
    n = 0
    while n < 12_000_000:
        line = ' '.join(random.choice(words) for _ in range(12)) + '\n'
        f.write(line); n += len(line)
EOF
		CMD[$p]="bzip2 -9 -c $TMP/data" ;;
	*) die "unknown program $p" ;;
	esac
done

run_plain() { local t0 t1; t0=$(now_ns); ${CMD[$1]} >/dev/null; t1=$(now_ns); echo $((t1 - t0)); }
run_cbn() {
	local dir=$2 t0 t1
	t0=$(now_ns)
	CBN_SYMCACHE_DIR=$dir "$CBN" -q -F "$FREQ" --report /dev/null -- ${CMD[$1]} >/dev/null
	t1=$(now_ns)
	echo $((t1 - t0))
}

# The peer at the same rate: what interrupting the program costs on this
# machine at all (perf record writes its data and exits; no report).
HAVE_PERF=0
perf record -q -F "$FREQ" -o "$TMP/probe.data" -- true >/dev/null 2>&1 && HAVE_PERF=1
run_perf() {
	local t0 t1
	t0=$(now_ns)
	perf record -q -F "$FREQ" -o "$TMP/perf.data" -- ${CMD[$1]} >/dev/null 2>&1
	t1=$(now_ns)
	echo $((t1 - t0))
}

median() { sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

echo "end-to-end: cbottleneck -F $FREQ PROG / PROG, median of $RUNS runs"
printf '%-8s %8s %8s %8s %11s %11s %11s\n' program plain_s cold_s warm_s cold/plain warm/plain perf/plain
for p in $PROGS; do
	[ -n "${CMD[$p]:-}" ] || continue
	warm="$TMP/warm-$p"
	run_cbn "$p" "$warm" >/dev/null     # fill the warm cache once
	: >"$TMP/plain"; : >"$TMP/cold"; : >"$TMP/warm"; : >"$TMP/perf"
	for ((i = 0; i < RUNS; i++)); do
		run_plain "$p" >>"$TMP/plain"
		((HAVE_PERF)) && run_perf "$p" >>"$TMP/perf"
		rm -rf "$TMP/cold-cache"
		run_cbn "$p" "$TMP/cold-cache" >>"$TMP/cold"
		run_cbn "$p" "$warm" >>"$TMP/warm"
	done
	pl=$(median <"$TMP/plain"); co=$(median <"$TMP/cold"); wa=$(median <"$TMP/warm")
	pe=0; ((HAVE_PERF)) && pe=$(median <"$TMP/perf")
	awk -v p="$p" -v pl="$pl" -v co="$co" -v wa="$wa" -v pe="$pe" 'BEGIN {
		r = "n/a"; if (pe > 0) r = sprintf("%.3f", pe/pl)
		printf "%-8s %8.3f %8.3f %8.3f %11.3f %11.3f %11s\n", p, pl/1e9, co/1e9, wa/1e9, co/pl, wa/pl, r }'
done
echo "target: warm/plain <= 1.03.  perf/plain is perf record -F $FREQ (no -g, no report):"
echo "what the sampling interrupts alone cost here; n/a without perf"
