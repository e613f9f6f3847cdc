#!/usr/bin/env bash
# python.sh — what reading Python frames costs per sample, and whether deep
# Python stacks are kept whole (docs/agent.md section 17, docs/performance.md).
#
# bench/python_depth.py runs a fixed loop LEVELS calls deep through C (as
# nested nn.Module calls are), under each mode, RUNS times interleaved:
#   plain   the interpreter alone (its own CPU: time.process_time)
#   off128  cbottleneck --python off --depth 128: native stacks at the depth
#           cap every run had before Python frames were read
#   off256  cbottleneck --python off --depth 256: native stacks, deeper cap
#   on      cbottleneck (Python frames read; the cap of a Python process is
#           256 frames, native and Python together)
# and prints, per mode, the CPU each sample costs: the program's CPU (its own
# time.process_time, which counts the handler)
# at RATE less at LOW Hz, over the samples more (what the agent costs once, at
# start and exit, cancels out), median of RUNS; the samples cut at the depth
# cap; and the samples that carry Python frames.
#   Targets: on costs at most 10 % more per sample than off at the same
#   stacks (a shallow loop, LEVELS=4, whose stacks fit either cap); on a deep
#   loop (LEVELS=24, ~180 native frames) on cuts < 1 % of its samples.
# In this VM a sample's cost is mostly the kernel's and the hypervisor's
# (the timer interrupt, the signal's delivery and return), which load makes
# noisy; so, where perf is installed, the agent's own user-space time is also
# split by `perf record` at PERF_HZ over a long run of each loop: the share of
# the samples in the Python walk (python_walk.c's functions) against those in
# the rest of the agent and its libunwind (the native sample's user part).
# Not part of ctest.  Usage: bench/python.sh [BUILD_DIR]   (default: build)
# Env: PY (python3), RUNS (5), RATE (4000), LOW (100), LEVELS ("4 24"), ITERS (60000),
#      PERF_HZ (10000; 0: no perf split)
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
CBN="$BUILD/cbottleneck"
PY=${PY:-python3}
RUNS=${RUNS:-5}
RATE=${RATE:-4000}
LOW=${LOW:-100}
PERF_HZ=${PERF_HZ:-10000}
LEVELS=${LEVELS:-"4 24"}
ITERS=${ITERS:-60000}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cbn-python.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

die() { echo "python.sh: $*" >&2; exit 1; }
[ -x "$CBN" ] || die "no launcher at $CBN; build first"
command -v "$PY" >/dev/null || die "no $PY"
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# run MODE LEVELS HZ: one run; prints "cpu samples truncated python_samples"
run() {
	local mode=$1 lv=$2 args=()
	case $mode in
	off128) args=(--python off --depth 128) ;;
	off256) args=(--python off --depth 256) ;;
	on) args=() ;;
	esac
	"$CBN" -q -F "$3" "${args[@]}" --json "$TMP/r.json" --report /dev/null -- \
		"$PY" "$SRC/bench/python_depth.py" "$lv" "$ITERS" >"$TMP/out" || die "run failed"
	python3 - "$TMP/r.json" "$(cat "$TMP/out")" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["run"]
print(sys.argv[2], r["samples"], r["truncated"], r["python"]["samples"])
PY
}

echo "python.sh: $("$PY" -c 'import sys; print(sys.version.split()[0])'), $LOW and $RATE Hz, $RUNS runs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for lv in $LEVELS; do
	for i in $(seq "$RUNS"); do
		for m in off128 off256 on; do
			paste -d' ' <(run "$m" "$lv" "$RATE") <(run "$m" "$lv" "$LOW") >>"$TMP/$lv.$m"
		done
	done
	printf "LEVELS=%-3s (plain CPU %.3f s)\n" "$lv" "$("$PY" "$SRC/bench/python_depth.py" "$lv" "$ITERS")"
	printf "  %-7s %10s %9s %9s %9s\n" mode "us/sample" samples "cut" "python"
	for m in off128 off256 on; do
		printf "  %-7s %10.2f %9s %8.1f%% %8.1f%%\n" "$m" \
			"$(awk '{ if ($2 > $6) print ($1 - $5) / ($2 - $6) * 1e6 }' "$TMP/$lv.$m" | median)" \
			"$(awk '{ print $2 }' "$TMP/$lv.$m" | median)" \
			"$(awk '{ if ($2) print 100 * $3 / $2 }' "$TMP/$lv.$m" | median)" \
			"$(awk '{ if ($2) print 100 * $4 / $2 }' "$TMP/$lv.$m" | median)"
	done
done

# The agent's user-space time per sample, split (perf record on the run).
[ "$PERF_HZ" -gt 0 ] && command -v perf >/dev/null || exit 0
echo "perf split of the agent's own user-space samples ($RATE Hz, perf at $PERF_HZ Hz):"
for lv in $LEVELS; do
	perf record -q -F "$PERF_HZ" -e cpu-clock -o "$TMP/perf.data" -- \
		"$CBN" -q -F "$RATE" --report /dev/null -- "$PY" "$SRC/bench/python_depth.py" "$lv" \
		$((ITERS * 5)) >/dev/null 2>&1 || die "perf record failed"
	perf report -i "$TMP/perf.data" --no-children --sort dso,sym --stdio 2>/dev/null |
		awk -v lv="$lv" '
		/libcbottleneck\.so|libcbn_unwd\.so/ {
			pct = $1; sub(/%/, "", pct); agent += pct
			if ($4 ~ /^(python_|py_)/) py += pct
		}
		END { printf "  LEVELS=%-3s agent %.2f %% of the CPU, of it the Python walk %.2f %%: %.1f %% of the rest\n",
			lv, agent, py, (agent > py) ? 100 * py / (agent - py) : 0 }'
done

