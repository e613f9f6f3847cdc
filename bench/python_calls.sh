#!/usr/bin/env bash
# python_calls.sh — what exact Python call counts (--calls) cost, against the
# plain run and cProfile, in one invocation (docs/reading-the-report.md,
# "Exact calls of Python functions"; docs/performance.md).
#
# Programs (each prints the CPU seconds of its work as its last line, so
# start-up, exit and the report are left out):
#   heavy   bench/py_calls_heavy.py: 3,000,000 calls of a one-line function,
#           then fib(25) (the worst case: nothing but calls)
#   stdlib  bench/py_stdlib.py: json, re and email (an ordinary program)
# Modes, RUNS rounds interleaved: plain, cbn (cbottleneck), calls
# (cbottleneck --calls), builtins (--calls=builtins), cprofile (python -m
# cProfile); MODES picks some (plain always among them).  Per interpreter and
# program: each mode's figure over plain's (median of the rounds' ratios and
# their range), and for heavy the share of f's self time in the CPU with and
# without --calls (the counting must not move it: target within 2 points).
# A run of heavy holds about 100 samples, so its share moves some 4 points by
# sampling alone; so the shares are also read on a longer run of it
# (SHARE_CALLS calls of f at SHARE_HZ, some 5,000 samples), SHARE_RUNS rounds of
# cbn and calls interleaved: the median share each way, their range, and the
# program's CPU with --calls over without (the samples taken out as the
# profiler's leave the program's CPU as it was without counting).
# Targets: calls <= 1.5x on heavy, <= 1.05x on stdlib.
# Not part of ctest.  Usage: bench/python_calls.sh [BUILD_DIR]  (default: build)
# Env: RUNS (5), PY_VERSIONS ("3.11 3.12 3.13"), MODES, PYENV_ROOT (~/.pyenv),
#      SHARE_RUNS (5; 0 leaves the longer runs out), SHARE_CALLS (20000000),
#      SHARE_HZ (4999)
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
CBN="$BUILD/cbottleneck"
RUNS=${RUNS:-5}
SHARE_RUNS=${SHARE_RUNS:-5}
SHARE_CALLS=${SHARE_CALLS:-20000000}
SHARE_HZ=${SHARE_HZ:-4999}
PY_VERSIONS=${PY_VERSIONS:-"3.11 3.12 3.13"}
PYENV_ROOT=${PYENV_ROOT:-$HOME/.pyenv}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cbn-calls.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

die() { echo "python_calls.sh: $*" >&2; exit 1; }
[ -x "$CBN" ] || die "no launcher at $CBN; build first (cmake --build $BUILD)"
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "RUNS=$RUNS: want a whole number >= 1"
[[ $SHARE_RUNS =~ ^[0-9]+$ ]] || die "SHARE_RUNS=$SHARE_RUNS: want a whole number"
[[ $SHARE_CALLS =~ ^[1-9][0-9]*$ ]] || die "SHARE_CALLS=$SHARE_CALLS: want a whole number >= 1"
[[ $SHARE_HZ =~ ^[1-9][0-9]*$ ]] || die "SHARE_HZ=$SHARE_HZ: want a whole number >= 1"

# The interpreter of version $1: Debian's, else pyenv's.
py_of()
{
	local p
	for p in "/usr/bin/python$1" "$PYENV_ROOT/versions/$1".*/bin/"python$1"; do
		[ -x "$p" ] && { echo "$p"; return 0; }
	done
	return 1
}

# run MODE PY SCRIPT: the script's figure (its last line).
run()
{
	local mode=$1 py=$2 script=$3
	case $mode in
	plain) "$py" "$script" ;;
	cbn) "$CBN" -q --json "$TMP/cbn.json" -- "$py" "$script" 2>/dev/null ;;
	calls) "$CBN" -q --calls --json "$TMP/calls.json" -- "$py" "$script" 2>/dev/null ;;
	builtins) "$CBN" -q --calls=builtins -- "$py" "$script" 2>/dev/null ;;
	cprofile) "$py" -m cProfile "$script" ;;
	esac | awk 'NF == 1 && $1 ~ /^[0-9.]+$/ { v = $1 } END { print v }'
}

# share JSON: f's self time over the program's CPU, in %.
share()
{
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
cpu = sum(f["self_ns"] for f in d["functions"]) or 1
print("%.1f" % (100.0 * sum(f["self_ns"] for f in d["functions"] if f["name"] == "f") / cpu))' "$1"
}

# share_long PY VERSION: the shares on the longer run of heavy, each way.
share_long()
{
	local py=$1 v=$2 r m
	: >"$TMP/long"
	for r in $(seq "$SHARE_RUNS"); do
		for m in cbn calls; do
			local -a opt=()
			[ "$m" = calls ] && opt=(--calls)
			"$CBN" -q -F "$SHARE_HZ" "${opt[@]}" --json "$TMP/long.json" -- "$py" \
				"$SRC/bench/py_calls_heavy.py" "$SHARE_CALLS" >/dev/null 2>&1 || continue
			python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
cpu = sum(f["self_ns"] for f in d["functions"]) or 1
f = sum(f["self_ns"] for f in d["functions"] if f["name"] == "f")
print(sys.argv[2], sys.argv[3], "%.2f" % (100.0 * f / cpu), cpu / 1e9)' \
				"$TMP/long.json" "$r" "$m" >>"$TMP/long"
		done
	done
	python3 - "$TMP/long" "$v" "$SHARE_CALLS" "$SHARE_HZ" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
sh = {m: [float(x[2]) for x in rows if x[1] == m] for m in ("cbn", "calls")}
cpu = {m: {x[0]: float(x[3]) for x in rows if x[1] == m} for m in ("cbn", "calls")}
if not sh["cbn"] or not sh["calls"]:
    print("python%s heavy %s calls: no share (a run failed)" % (sys.argv[2], sys.argv[3]))
    sys.exit(0)
rs = [cpu["calls"][r] / cpu["cbn"][r] for r in cpu["calls"] if r in cpu["cbn"]]
a, b = statistics.median(sh["cbn"]), statistics.median(sh["calls"])
print("python%s heavy %s calls at %s Hz: f's share %.1f%% (%.1f-%.1f) without --calls, "
      "%.1f%% (%.1f-%.1f) with: %+.1f points (target within 2); the program's CPU with over "
      "without %.2fx" % (sys.argv[2], sys.argv[3], sys.argv[4], a, min(sh["cbn"]),
                         max(sh["cbn"]), b, min(sh["calls"]), max(sh["calls"]), b - a,
                         statistics.median(rs)))
PY
}

modes=${MODES:-"plain cbn calls builtins cprofile"}
for v in $PY_VERSIONS; do
	py=$(py_of "$v") || { echo "python$v: not installed, skipped"; continue; }
	for prog in heavy stdlib; do
		script="$SRC/bench/py_calls_heavy.py"
		[ "$prog" = stdlib ] && script="$SRC/bench/py_stdlib.py"
		: >"$TMP/fig"
		for r in $(seq "$RUNS"); do
			for m in $modes; do
				echo "$r $m $(run "$m" "$py" "$script")" >>"$TMP/fig"
				if [ "$prog" = heavy ] && [ "$m" = cbn ]; then
					echo "$r share_cbn $(share "$TMP/cbn.json")" >>"$TMP/fig"
				elif [ "$prog" = heavy ] && [ "$m" = calls ]; then
					echo "$r share_calls $(share "$TMP/calls.json")" >>"$TMP/fig"
				fi
			done
		done
		python3 - "$TMP/fig" "$v" "$prog" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if len(l.split()) == 3]
fig = {}
for r, m, x in rows:
    fig.setdefault(m, {})[r] = float(x)
plain = fig.get("plain", {})
out = []
for m in ("cbn", "calls", "builtins", "cprofile"):
    rs = [fig[m][r] / plain[r] for r in fig.get(m, {}) if plain.get(r)]
    if rs:
        out.append("%s %.2fx (%.2f-%.2f)" % (m, statistics.median(rs), min(rs), max(rs)))
line = "python%s %-6s plain %.3f s; %s" % (sys.argv[2], sys.argv[3],
                                          statistics.median(plain.values()), "; ".join(out))
if "share_cbn" in fig:
    line += "; f's share %.1f%% without --calls, %.1f%% with" % (
        statistics.median(fig["share_cbn"].values()), statistics.median(fig["share_calls"].values()))
print(line)
PY
	done
	if [ "$SHARE_RUNS" -gt 0 ]; then
		share_long "$py" "$v"
	fi
done
