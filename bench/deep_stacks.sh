#!/usr/bin/env bash
# deep_stacks.sh — what sampling deep stacks costs a program: the sampling
# handler's CPU per sample and the program's slowdown against its plain run,
# in one invocation, next to `perf record -g` and `perf record --call-graph
# dwarf` on the same programs (docs/performance.md, "Deep stacks").
#
# Programs (each prints its own figure as its last stdout line, so start-up,
# exit and the report are left out of every ratio):
#   py3.NN  bench/py_recursion.py: a pure-Python recursion 100 frames deep
#           doing fixed work, on pyenv's CPython 3.11, 3.12, 3.13 (those
#           installed); its figure: the median CPU ms of one iteration
#   mlp     bench/torch_mlp.py: a dispatch-bound PyTorch CPU loop (tiny MLP,
#           batch 8, AdamW), when that file is present; median step ms
#   train   bench/torch_train.py: a small CNN, batch 32, SGD; median step ms
# Modes, RUNS rounds interleaved so that drift in the machine's load hits
# them alike:
#   plain   the program alone
#   cbn     cbottleneck -v -F HZ -o DIR (the report to a file)
#   perf-g  perf record -g -F HZ (frame-pointer call chains)
#   dwarf   perf record --call-graph dwarf -F HZ (8 KiB of stack copied a sample)
# Per program it prints each mode's figure over plain's (the median of the
# rounds' ratios, and their range); for cbottleneck the handler's CPU per
# sample and the profiler's overhead in % of the program's CPU, both from
# the report's "Profiler overhead:" and "Samples:" lines (median of the
# rounds); for the py programs, whose figure is CPU time on one thread, the
# CPU each mode adds per sample, from the slowdown (perf's kernel-side cost
# shows only there). Then the verdicts against the targets: the handler
# <= 3 us per sample, the step <= 1.02x plain, the overhead line <= 1 %.
# Not part of ctest.  Usage: bench/deep_stacks.sh [BUILD_DIR]  (default: build)
# Env: RUNS (5), HZ (999), PY_VERSIONS ("3.11 3.12 3.13"), PYENV_ROOT
#      (~/.pyenv), TORCH_PY (/usr/bin/python3), PROGRAMS ("py mlp train"),
#      PY_ITERS (150), MLP_STEPS (1000), TRAIN_STEPS (30), TORCH_THREADS
#      (torch's own), PERF (1; 0 leaves perf out)
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
CBN="$BUILD/cbottleneck"
RUNS=${RUNS:-5}
HZ=${HZ:-999}
PY_VERSIONS=${PY_VERSIONS:-"3.11 3.12 3.13"}
PYENV_ROOT=${PYENV_ROOT:-$HOME/.pyenv}
TORCH_PY=${TORCH_PY:-/usr/bin/python3}
PROGRAMS=${PROGRAMS:-"py mlp train"}
PY_ITERS=${PY_ITERS:-150}
MLP_STEPS=${MLP_STEPS:-1000}
TRAIN_STEPS=${TRAIN_STEPS:-30}
TORCH_THREADS=${TORCH_THREADS:-}
PERF=${PERF:-1}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cbn-deep.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

die() { echo "deep_stacks.sh: $*" >&2; exit 1; }
note() { echo "deep_stacks.sh: $*"; }
[ -x "$CBN" ] || die "no launcher at $CBN; build first (cmake --build $BUILD)"
command -v python3 >/dev/null || die "python3 is needed to read the figures"
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "RUNS=$RUNS: want a whole number >= 1"

# Which perf modes can run here, and why not.
modes=(plain cbn)
if [ "$PERF" = 0 ]; then
	note "perf modes left out (PERF=0)"
elif ! command -v perf >/dev/null 2>&1; then
	note "perf modes skipped: perf is not installed (apt-get install linux-perf)"
else
	for m in perf-g dwarf; do
		cg=(-g)
		[ "$m" = dwarf ] && cg=(--call-graph dwarf)
		if perf record -q "${cg[@]}" -F "$HZ" -N -B -o "$TMP/probe.data" -- true \
			>/dev/null 2>"$TMP/perf.err"; then
			modes+=("$m")
		else
			note "$m skipped: perf record failed: $(head -n 1 "$TMP/perf.err")" \
				"(perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo ?))"
		fi
	done
fi

# The programs: "NAME|KIND|INTERPRETER|SCRIPT ARGS..."; KIND cpu (a CPU time
# on one thread) or step (a wall-clock step time).
progs=()
for p in $PROGRAMS; do
	case $p in
	py)
		for v in $PY_VERSIONS; do
			py=$(ls -d "$PYENV_ROOT"/versions/"$v".*/bin/python3 2>/dev/null | sort -V | tail -n 1 || true)
			if [ -z "$py" ]; then
				note "py$v skipped: no $PYENV_ROOT/versions/$v.*/bin/python3 (pyenv install $v)"
				continue
			fi
			progs+=("py$v|cpu|$py|$SRC/bench/py_recursion.py $PY_ITERS 100")
		done
		;;
	mlp | train)
		script=$SRC/bench/torch_mlp.py steps=$MLP_STEPS
		[ "$p" = train ] && script=$SRC/bench/torch_train.py steps=$TRAIN_STEPS
		if [ ! -e "$script" ]; then
			note "$p skipped: no $script"
		elif ! "$TORCH_PY" -c 'import torch' >/dev/null 2>&1; then
			note "$p skipped: $TORCH_PY cannot import torch (apt-get install python3-torch)"
		else
			progs+=("$p|step|$TORCH_PY|$script $steps${TORCH_THREADS:+ $TORCH_THREADS}")
		fi
		;;
	*) die "PROGRAMS: unknown program '$p' (py, mlp, train)" ;;
	esac
done
[ ${#progs[@]} -gt 0 ] || die "no program to run"

# figure FILE WHAT: the program's last stdout line, checked to be a number.
figure()
{
	local v
	v=$(tail -n 1 "$1")
	[[ $v =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "$2 printed no figure as its last line (got '$v')"
	echo "$v"
}

# run_one NAME MODE CMD...: one run; appends its figure (and for cbn the
# report's "handler_ns samples overhead_pct") to $TMP/NAME.MODE.
run_one()
{
	local name=$1 mode=$2 rc=0
	shift 2
	rm -rf "$TMP/sess" "$TMP/perf.data"
	case $mode in
	plain) "$@" >"$TMP/out" 2>"$TMP/err" || rc=$? ;;
	cbn) "$CBN" -v -F "$HZ" -o "$TMP/sess" --report "$TMP/report" -- "$@" \
		>"$TMP/out" 2>"$TMP/err" || rc=$? ;;
	perf-g) perf record -q -g -F "$HZ" -N -B -o "$TMP/perf.data" -- "$@" \
		>"$TMP/out" 2>"$TMP/err" || rc=$? ;;
	dwarf) perf record -q --call-graph dwarf -F "$HZ" -N -B -o "$TMP/perf.data" -- "$@" \
		>"$TMP/out" 2>"$TMP/err" || rc=$? ;;
	esac
	[ "$rc" = 0 ] || die "$name under $mode failed (exit $rc): $(tail -n 3 "$TMP/err")"
	local f
	f=$(figure "$TMP/out" "$name under $mode") || exit 1
	if [ "$mode" != cbn ]; then
		echo "$f" >>"$TMP/$name.$mode"
		return
	fi
	local rep
	rep=$(read_report "$TMP/report" "$name") || exit 1
	echo "$f $rep" >>"$TMP/$name.$mode"
}

# read_report FILE NAME: "handler_ns samples overhead_pct" from the lines
# src/report/text_head.c prints under -v (text_overhead, text_samples_verbose):
#   Profiler overhead: 84.209ms (2.7% of the program's CPU: ..., 66.120ms in
#   the sampling handler, ...; in no table)
#   Samples:    958 (weight 1000: ...)
read_report()
{
	python3 - "$1" "$2" <<'PY' || exit 1
import re, sys
path, name = sys.argv[1], sys.argv[2]
try:
    text = open(path, errors="replace").read()
except OSError as e:
    sys.exit("deep_stacks.sh: cbottleneck -v on %s wrote no report: %s" % (name, e))
def fail(what):
    sys.stderr.write("deep_stacks.sh: the report of cbottleneck -v on %s has no %s; "
                     "its first lines:\n%s\n" % (name, what, "\n".join(text.splitlines()[:25])))
    sys.exit(1)
def ns(s):
    v, unit = re.fullmatch(r"([0-9.]+)(s|ms|us)", s).groups()
    return float(v) * {"s": 1e9, "ms": 1e6, "us": 1e3}[unit]
o = re.search(r"^\s*Profiler overhead: ([0-9.]+(?:s|ms|us)) \(([0-9.]+)% of the program's CPU(.*)$",
              text, re.M)
if not o:
    fail("'Profiler overhead: T (N% of the program's CPU ...' line")
h = re.search(r"([0-9.]+(?:s|ms|us)) in the sampling handler", o.group(3))
if not h:
    fail("'T in the sampling handler' on its Profiler overhead line")
s = re.search(r"^\s*Samples:\s+([0-9]+)", text, re.M)
if not s:
    fail("'Samples: N' line")
if int(s.group(1)) == 0:
    fail("sample ('Samples: 0')")
print("%.0f %s %s" % (ns(h.group(1)), s.group(1), o.group(2)))
PY
}

echo "deep_stacks.sh: $HZ Hz, median of $RUNS interleaved rounds, modes: ${modes[*]}"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), Linux $(uname -r), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "commands: cbottleneck -v -F $HZ -o DIR --report FILE -- PROG"
[[ " ${modes[*]} " = *" perf-g "* ]] && echo "          perf record -q -g -F $HZ -N -B -o FILE -- PROG"
[[ " ${modes[*]} " = *" dwarf "* ]] && echo "          perf record -q --call-graph dwarf -F $HZ -N -B -o FILE -- PROG"

for entry in "${progs[@]}"; do
	IFS='|' read -r name kind interp args <<<"$entry"
	read -r -a argv <<<"$args"
	cmd=("$interp" "${argv[@]}")
	# a warm-up run, discarded: page cache, and the program works
	"${cmd[@]}" >"$TMP/out" 2>"$TMP/err" || die "$name does not run: $(tail -n 3 "$TMP/err")"
	figure "$TMP/out" "$name" >/dev/null
	for ((r = 1; r <= RUNS; r++)); do
		for m in "${modes[@]}"; do
			run_one "$name" "$m" "${cmd[@]}"
		done
	done
	python3 - "$TMP" "$name" "$kind" "$HZ" "${cmd[*]#"$SRC"/}" "${modes[@]}" <<'PY'
import statistics, sys
tmp, name, kind, hz, what, modes = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), \
    sys.argv[5], sys.argv[6:]
def rows(m):
    return [[float(x) for x in l.split()] for l in open("%s/%s.%s" % (tmp, name, m))]
med = statistics.median
plain = [r[0] for r in rows("plain")]
unit = "CPU ms an iteration" if kind == "cpu" else "ms a step"
print("\n%s: %s\n  plain %.3f %s (median of %d; range %.3f-%.3f)" %
      (name, what, med(plain), unit, len(plain), min(plain), max(plain)))
label = {"cbn": "cbottleneck", "perf-g": "perf -g", "dwarf": "perf dwarf"}
print("  %-12s %8s %14s %13s %14s %8s %10s" % ("mode", "ratio", "range", "added/sample",
                                              "handler/sample", "samples", "overhead"))
verdict = None
for m in modes[1:]:
    rs = rows(m)
    ratio = [r[0] / p for r, p in zip(rs, plain)]
    # CPU added per sample, from the slowdown: a CPU-time figure on one
    # thread, sampled every 1/hz of that thread's CPU (the handler's included)
    added = "-"
    if kind == "cpu":
        added = "%.1f us" % med([(r[0] - p) / (r[0] * hz / 1e3) * 1e3 for r, p in zip(rs, plain)])
    extra = ""
    if m == "cbn":
        per = med([r[1] / r[2] / 1e3 for r in rs])
        pct = med([r[3] for r in rs])
        extra = " %11.1f us %8d %8.1f %%" % (per, med([r[2] for r in rs]), pct)
        verdict = (per, med(ratio), pct)
    print("  %-12s %7.3fx %7.3f-%.3fx %13s%s" % (label[m], med(ratio), min(ratio), max(ratio),
                                                added, extra))
ok = lambda c: "met" if c else "NOT MET"
per, ratio, pct = verdict
print("  verdict: handler %.1f us/sample (target <= 3): %s; %s %.3fx plain (target <= 1.02): %s;"
      " overhead %.1f %% of the program's CPU (target <= 1 %%): %s" %
      (per, ok(per <= 3), "step" if kind == "step" else "iteration", ratio, ok(ratio <= 1.02),
       pct, ok(pct <= 1)))
PY
done
echo
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
