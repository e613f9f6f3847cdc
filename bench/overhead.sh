#!/usr/bin/env bash
# overhead.sh — what profiling costs: profiled / unprofiled ratios of wall time
# and of CPU time (user+sys of everything the command ran), median of RUNS runs
# with all tools' runs interleaved so drift hits them alike, for cbottleneck,
# `perf record -g` and gperftools' libprofiler at the same rates; then the time
# `cbottleneck report` takes on a synthetic session of 1 M samples x 30 frames.
#
# Programs: the CPU examples (split, threads, recursion, dlopen_hot), which burn
# until a CPU-time deadline, so in-thread profiling cost cannot lengthen them
# (their ratios show start-up, exit and report costs), and bench/fixed_work.c,
# the same shapes doing a fixed amount of work, whose ratios show everything.
# Not part of ctest.  Usage: bench/overhead.sh [BUILD_DIR]   (default: build)
# Env: RUNS (5), SCALE (1), RATES ("99 1000"), EXAMPLES_LIST, FIXED_LIST,
#      SESSION_SAMPLES (1000000), SKIP_SESSION=1 to leave out the report timing.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
CBN="$BUILD/cbottleneck"
EX="$BUILD/examples"
RUNS=${RUNS:-5}
SCALE=${SCALE:-1}
RATES=${RATES:-"99 1000"}
EXAMPLES_LIST=${EXAMPLES_LIST:-"split threads recursion dlopen_hot"}
FIXED_LIST=${FIXED_LIST:-"split threads recursion"}
SESSION_SAMPLES=${SESSION_SAMPLES:-1000000}
LIBPROFILER=${LIBPROFILER:-/usr/lib/x86_64-linux-gnu/libprofiler.so}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cbn-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

die() { echo "overhead.sh: $*" >&2; exit 1; }
[ -x "$CBN" ] || die "no launcher at $CBN; build first (cmake --build $BUILD)"
for e in $EXAMPLES_LIST; do
	[ -x "$EX/$e" ] || die "no example $EX/$e; build first"
done
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (apt-get install time)"
# Built like the examples: -O2 -g, no frame pointers forced.
cc -std=c11 -D_GNU_SOURCE -O2 -g "$SRC/bench/fixed_work.c" -o "$TMP/fixed_work" -lpthread ||
	die "cannot build bench/fixed_work.c"

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
tools=(cbn)
[ -z "$PERF_WHY" ] && tools+=(perf)
[ -z "$GPERF_WHY" ] && tools+=(gperf)

now_ns() { date +%s%N; }

# prog_cmd PROG: the command line of ex:NAME or fw:NAME.
prog_cmd()
{
	case $1 in
	ex:*) echo "$EX/${1#ex:} $SCALE" ;;
	fw:*) echo "$TMP/fixed_work ${1#fw:} $SCALE" ;;
	esac
}

# run_one TOOL RATE PROG: one run; appends "wall_s cpu_s" to its times file,
# and for cbottleneck the target's own wall time (session.json) to another.
run_one()
{
	local tool=$1 rate=$2 prog=$3 t0 t1 rc=0 out="$TMP/t.$3.$1.$2"
	local -a cmd
	read -r -a cmd <<<"$(prog_cmd "$prog")"
	rm -rf "$TMP/sess"
	t0=$(now_ns)
	case $tool in
	base) /usr/bin/time -f "%U %S" -o "$TMP/cpu" "${cmd[@]}" >/dev/null 2>&1 || rc=$? ;;
	cbn) /usr/bin/time -f "%U %S" -o "$TMP/cpu" "$CBN" "${CBN_RATE[@]}" "$rate" -o "$TMP/sess" \
		-- "${cmd[@]}" >/dev/null 2>&1 || rc=$? ;;
	perf) /usr/bin/time -f "%U %S" -o "$TMP/cpu" perf record -q -g -F "$rate" \
		-o "$TMP/perf.data" -- "${cmd[@]}" >/dev/null 2>&1 || rc=$? ;;
	gperf) /usr/bin/time -f "%U %S" -o "$TMP/cpu" env LD_PRELOAD="$LIBPROFILER" \
		CPUPROFILE="$TMP/gperf.prof" CPUPROFILE_FREQUENCY="$rate" "${cmd[@]}" \
		>/dev/null 2>&1 || rc=$? ;;
	esac
	t1=$(now_ns)
	if [ "$rc" != 0 ]; then
		echo "overhead.sh: $tool at $rate Hz failed on $prog (exit $rc)" >&2
		echo "NaN NaN" >>"$out"
		return
	fi
	if [ "$tool" != cbn ]; then
		echo "$(( (t1 - t0) / 1000 ))e-6 $(awk '{ print $1 + $2 }' "$TMP/cpu")" >>"$out"
		return
	fi
	# cbottleneck: also the CPU of reporting the kept session again, so the
	# recording alone (target + agent) is the whole command minus that, and the
	# target's own wall time as the launcher measured it (session.json).
	local total_cpu rep_cpu
	total_cpu=$(awk '{ print $1 + $2 }' "$TMP/cpu")
	if /usr/bin/time -f "%U %S" -o "$TMP/cpu" "$CBN" report "$TMP/sess" >/dev/null 2>&1; then
		rep_cpu=$(awk '{ print $1 + $2 }' "$TMP/cpu")
	else
		rep_cpu=NaN
	fi
	echo "$(( (t1 - t0) / 1000 ))e-6 $total_cpu $rep_cpu" >>"$out"
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["wall_ns"] / 1e9, float(sys.argv[2]) - float(sys.argv[3]))' \
		"$TMP/sess/session.json" "$total_cpu" "$rep_cpu" >>"$TMP/t.$prog.cbnrun.$rate" 2>/dev/null ||
		echo "NaN NaN" >>"$TMP/t.$prog.cbnrun.$rate"
}

progs=()
for e in $EXAMPLES_LIST; do progs+=("ex:$e"); done
for f in $FIXED_LIST; do progs+=("fw:$f"); done

echo "cbottleneck overhead: profiled / unprofiled, median of $RUNS runs, SCALE=$SCALE"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), Linux $(uname -r), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "commands: cbottleneck ${CBN_RATE[*]} RATE -o DIR -- PROG"
echo "          perf record -q -g -F RATE -o FILE -- PROG"
echo "          LD_PRELOAD=$LIBPROFILER CPUPROFILE=FILE CPUPROFILE_FREQUENCY=RATE PROG"
[ -n "$PERF_WHY" ] && echo "perf: n/a ($PERF_WHY)"
[ -n "$GPERF_WHY" ] && echo "gperftools: n/a ($GPERF_WHY)"
echo "ex:NAME = examples/NAME $SCALE (burns to a CPU-time deadline); fw:NAME = bench/fixed_work NAME $SCALE (fixed work)"
echo "cbn-run = the target's wall time as the launcher measured it (session.json), without the report;"
echo "cbn = the whole cbottleneck command, symbolization and printed report included"
echo "cbn-rec (CPU) = the whole command minus the CPU of 'cbottleneck report DIR' on the kept session"
echo

for p in "${progs[@]}"; do
	read -r -a warm <<<"$(prog_cmd "$p")"
	"${warm[@]}" >/dev/null 2>&1 || die "$p does not run"
	for ((r = 1; r <= RUNS; r++)); do
		run_one base 0 "$p"
		for rate in $RATES; do
			for tool in "${tools[@]}"; do
				run_one "$tool" "$rate" "$p"
			done
		done
	done
done

python3 - "$TMP" "$RATES" "${progs[*]}" <<'EOF'
import math, statistics, sys
tmp, rates, progs = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
names = {"cbnrun": "cbn-run", "cbn": "cbn", "perf": "perf", "gperf": "gperftools"}
cpu_names = dict(names, cbnrun="cbn-rec")
def med(p, tool, rate, col):
    try:
        lines = open("%s/t.%s.%s.%s" % (tmp, p, tool, rate)).read().split("\n")
    except FileNotFoundError:
        return None
    v = []
    for l in lines:
        f = l.split()
        if len(f) > col and not math.isnan(float(f[col])):
            v.append(float(f[col]))
    return statistics.median(v) if v else None
def table(title, col, tools, nm):
    cols = [(t, r) for r in rates for t in tools]
    head = ["program", "unprofiled"] + ["%s@%s" % (nm[t], r) for t, r in cols]
    rows = []
    for p in progs:
        b = med(p, "base", 0, col)
        row = [p, "%.3f s" % b if b else "n/a"]
        for t, r in cols:
            m = med(p, t, r, col)
            row.append("%.3fx" % (m / b) if m and b else "n/a")
        rows.append(row)
    w = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    print(title)
    for r in [head] + rows:
        print("  ".join(c.ljust(w[i]) if i == 0 else c.rjust(w[i]) for i, c in enumerate(r)))
    print()
table("Wall time, profiled / unprofiled:", 0, ["cbnrun", "cbn", "perf", "gperf"], names)
table("CPU time (user+sys of everything the command ran), profiled / unprofiled:", 1,
      ["cbnrun", "cbn", "perf", "gperf"], cpu_names)
EOF

[ "${SKIP_SESSION:-0}" = 1 ] && exit 0
gen="$TMP/gen_session"
cc -std=c11 -D_GNU_SOURCE -O2 -g -I"$SRC/src/format" "$SRC/bench/gen_session.c" -o "$gen" ||
	die "cannot build bench/gen_session.c"
"$gen" "$TMP/session" "$SESSION_SAMPLES" 30 >/dev/null
best=""
for r in 1 2 3; do
	t0=$(now_ns)
	set +e
	/usr/bin/time -f "%M %U %S" -o "$TMP/rss" "$CBN" report "$TMP/session" >"$TMP/report.txt" 2>"$TMP/report.err"
	rc=$?
	set -e
	t1=$(now_ns)
	[ "$rc" = 0 ] || die "cbottleneck report failed (exit $rc): $(head -n 3 "$TMP/report.err")"
	s=$(( (t1 - t0) / 1000000 ))
	if [ -z "$best" ] || [ "$s" -lt "$best" ]; then
		best=$s
		read -r rss ucpu scpu <"$TMP/rss"
	fi
done
printf 'cbottleneck report DIR on %s samples x 30 frames (%s MiB session, bench/gen_session.c):\n' \
	"$SESSION_SAMPLES" "$(( $(du -k "$TMP/session" | cut -f1) / 1024 ))"
printf '  %d.%03d s wall (best of 3), %s s user + %s s sys, peak RSS %d MiB\n' \
	$((best / 1000)) $((best % 1000)) "$ucpu" "$scpu" $((rss / 1024))
grep -q 'gen_fn_' "$TMP/report.txt" || echo "warning: the report names no gen_fn_* function: symbolization failed?" >&2
