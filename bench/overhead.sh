#!/usr/bin/env bash
# overhead.sh — what profiling costs: the wall-time ratio profiled / unprofiled
# (median of RUNS runs, runs of all tools interleaved so drift hits them alike)
# for the CPU examples under cbottleneck, `perf record -g` and gperftools'
# libprofiler at the same rates; then the time `cbottleneck report` takes on a
# synthetic session of 1 M samples x 30 frames (bench/gen_session.c).
# Not part of ctest.  Usage: bench/overhead.sh [BUILD_DIR]   (default: build)
# Env: RUNS (5), SCALE (1), RATES ("99 1000"), EXAMPLES_LIST, SESSION_SAMPLES (1000000),
#      SKIP_SESSION=1 to leave out the report timing.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
CBN="$BUILD/cbottleneck"
EX="$BUILD/examples"
RUNS=${RUNS:-5}
SCALE=${SCALE:-1}
RATES=${RATES:-"99 1000"}
EXAMPLES_LIST=${EXAMPLES_LIST:-"split threads recursion dlopen_hot"}
SESSION_SAMPLES=${SESSION_SAMPLES:-1000000}
LIBPROFILER=${LIBPROFILER:-/usr/lib/x86_64-linux-gnu/libprofiler.so}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cbn-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

die() { echo "overhead.sh: $*" >&2; exit 1; }
[ -x "$CBN" ] || die "no launcher at $CBN; build first (cmake --build $BUILD)"
for e in $EXAMPLES_LIST; do
	[ -x "$EX/$e" ] || die "no example $EX/$e; build first"
done

# The launcher's rate option, as its --help spells it.
help=$("$CBN" --help 2>&1 || true)
if grep -qE -- '(^|[ ,])-F[ ,]' <<<"$help"; then
	CBN_RATE=(-F)
elif grep -q -- '--frequency' <<<"$help"; then
	CBN_RATE=(--frequency)
else
	die "cannot tell how to set the sampling rate from '$CBN --help'"
fi

# Which tools can run here, and why not.
PERF_WHY=""
if ! command -v perf >/dev/null 2>&1; then
	PERF_WHY="perf not installed (apt-get install linux-perf)"
elif ! perf record -q -g -F 99 -o "$TMP/probe.data" -- true >/dev/null 2>"$TMP/perf.err"; then
	PERF_WHY="perf record failed: $(head -n 1 "$TMP/perf.err") (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo ?))"
fi
GPERF_WHY=""
[ -e "$LIBPROFILER" ] || GPERF_WHY="$LIBPROFILER missing (apt-get install libgoogle-perftools4)"

now_ns() { date +%s%N; }

# run_one TOOL RATE EXAMPLE: one timed run; prints seconds.  Output discarded.
run_one()
{
	local tool=$1 rate=$2 e=$3 t0 t1
	t0=$(now_ns)
	case $tool in
	base) "$EX/$e" "$SCALE" >/dev/null 2>&1 ;;
	cbn) rm -rf "$TMP/sess"
		"$CBN" "${CBN_RATE[@]}" "$rate" -o "$TMP/sess" -- "$EX/$e" "$SCALE" >/dev/null 2>&1 ;;
	perf) perf record -q -g -F "$rate" -o "$TMP/perf.data" -- "$EX/$e" "$SCALE" >/dev/null 2>&1 ;;
	gperf) env LD_PRELOAD="$LIBPROFILER" CPUPROFILE="$TMP/gperf.prof" \
		CPUPROFILE_FREQUENCY="$rate" "$EX/$e" "$SCALE" >/dev/null 2>&1 ;;
	esac || { echo "overhead.sh: $tool at $rate Hz failed on $e" >&2; echo NaN; return; }
	t1=$(now_ns)
	echo "$(( (t1 - t0) / 1000 ))e-6"
	# The launcher's own measure of the target (spawn to the last exit), without
	# the report it prints afterwards.
	if [ "$tool" = cbn ]; then
		python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["wall_ns"] / 1e9)' \
			"$TMP/sess/session.json" >>"$TMP/t.$e.cbnrun.$rate" 2>/dev/null ||
			echo NaN >>"$TMP/t.$e.cbnrun.$rate"
	fi
}

tools=(cbn)
[ -z "$PERF_WHY" ] && tools+=(perf)
[ -z "$GPERF_WHY" ] && tools+=(gperf)

echo "cbottleneck overhead: wall time profiled / unprofiled, median of $RUNS runs, SCALE=$SCALE"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(uname -r)"
echo "commands: cbottleneck ${CBN_RATE[*]} RATE -o DIR -- EX $SCALE"
echo "          (cbn-run: the target's wall time as the launcher measured it, session.json;"
echo "           cbn-total: the whole command, including symbolization and the printed report)"
echo "          perf record -q -g -F RATE -o FILE -- EX $SCALE"
echo "          LD_PRELOAD=$LIBPROFILER CPUPROFILE=FILE CPUPROFILE_FREQUENCY=RATE EX $SCALE"
[ -n "$PERF_WHY" ] && echo "perf: n/a ($PERF_WHY)"
[ -n "$GPERF_WHY" ] && echo "gperftools: n/a ($GPERF_WHY)"
echo

# Times go to $TMP/t.<example>.<tool>.<rate>, one line per run.
for e in $EXAMPLES_LIST; do
	run_one base 0 "$e" >/dev/null # warm the page cache
	for ((r = 1; r <= RUNS; r++)); do
		run_one base 0 "$e" >>"$TMP/t.$e.base.0"
		for rate in $RATES; do
			for tool in "${tools[@]}"; do
				run_one "$tool" "$rate" "$e" >>"$TMP/t.$e.$tool.$rate"
			done
		done
	done
done

python3 - "$TMP" "$RATES" "$EXAMPLES_LIST" "${tools[*]}" "${PERF_WHY:+n/a}" "${GPERF_WHY:+n/a}" <<'EOF'
import math, statistics, sys
tmp, rates, examples, tools = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4].split()
na = {"perf": sys.argv[5], "gperf": sys.argv[6]}
names = {"cbn": "cbottleneck", "perf": "perf", "gperf": "gperftools"}
def med(e, tool, rate):
    try:
        v = [float(x) for x in open("%s/t.%s.%s.%s" % (tmp, e, tool, rate))]
    except FileNotFoundError:
        return None
    v = [x for x in v if not math.isnan(x)]
    return statistics.median(v) if v else None
cols = [(t, r) for r in rates for t in ("cbnrun", "cbn", "perf", "gperf")]
names["cbnrun"] = "cbn-run"
names["cbn"] = "cbn-total"
head = ["example", "unprofiled"] + ["%s@%s" % (names[t], r) for t, r in cols]
rows = []
for e in examples:
    b = med(e, "base", 0)
    row = [e, "%.3f s" % b if b else "n/a"]
    for t, r in cols:
        m = med(e, t, r)
        row.append("%.3fx" % (m / b) if m and b else "n/a")
    rows.append(row)
w = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
for r in [head] + rows:
    print("  ".join(c.ljust(w[i]) if i == 0 else c.rjust(w[i]) for i, c in enumerate(r)))
EOF

[ "${SKIP_SESSION:-0}" = 1 ] && exit 0
echo
gen="$TMP/gen_session"
cc -std=c11 -D_GNU_SOURCE -O2 -g -I"$SRC/src/format" "$SRC/bench/gen_session.c" -o "$gen" ||
	die "cannot build bench/gen_session.c"
"$gen" "$TMP/session" "$SESSION_SAMPLES" 30 >/dev/null
best=""
for r in 1 2 3; do
	t0=$(now_ns)
	set +e
	/usr/bin/env time -f "%M" -o "$TMP/rss" "$CBN" report "$TMP/session" >"$TMP/report.txt" 2>"$TMP/report.err"
	rc=$?
	set -e
	t1=$(now_ns)
	[ "$rc" = 0 ] || die "cbottleneck report failed (exit $rc): $(head -n 3 "$TMP/report.err")"
	s=$(( (t1 - t0) / 1000000 ))
	{ [ -z "$best" ] || [ "$s" -lt "$best" ]; } && best=$s && rss=$(tail -n 1 "$TMP/rss")
done
printf 'cbottleneck report on %s samples x 30 frames (%s MiB session): %d.%03d s (best of 3), peak RSS %d MiB\n' \
	"$SESSION_SAMPLES" "$(( $(du -k "$TMP/session" | cut -f1) / 1024 ))" \
	$((best / 1000)) $((best % 1000)) $((rss / 1024))
grep -q 'gen_fn_' "$TMP/report.txt" || echo "warning: the report names no gen_fn_* function: symbolization failed?" >&2
