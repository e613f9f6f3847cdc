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
# Targets: calls <= 1.5x on heavy, <= 1.05x on stdlib.
# Not part of ctest.  Usage: bench/python_calls.sh [BUILD_DIR]  (default: build)
# Env: RUNS (5), PY_VERSIONS ("3.11 3.12 3.13"), MODES, PYENV_ROOT (~/.pyenv)
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
CBN="$BUILD/cbottleneck"
RUNS=${RUNS:-5}
PY_VERSIONS=${PY_VERSIONS:-"3.11 3.12 3.13"}
PYENV_ROOT=${PYENV_ROOT:-$HOME/.pyenv}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cbn-calls.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

die() { echo "python_calls.sh: $*" >&2; exit 1; }
[ -x "$CBN" ] || die "no launcher at $CBN; build first (cmake --build $BUILD)"
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "RUNS=$RUNS: want a whole number >= 1"

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
done
