#!/usr/bin/env bash
# memory_loop.sh — what `--memory` costs a program that allocates all the
# time, next to a sampled heap profiler and a tracing one: each program's own
# figure under each mode, median of RUNS runs with every mode's runs
# interleaved (so drift hits them alike), as a ratio to the plain run of the
# same invocation; then the targets' verdicts.
#
# Programs: torch (bench/torch_mlp.py: a dispatch-bound PyTorch CPU training
# loop, tiny MLP, batch 8, AdamW, Debian's python3-torch; its figure is the
# median step time), malloc (bench/malloc_loop.c: OPS malloc/free pairs of
# 16..4096 bytes, mixed lifetimes; its figure is the loop's wall time, and its
# CPU time beside it) and hot (malloc_loop HOT_OPS hot: a block of 16..271
# bytes allocated and freed at once, in the cache; plain, cbottleneck and
# --memory only, for what a call costs).  Modes: plain; cbottleneck (CPU sampling at 999 Hz, no
# --memory); cbottleneck --memory (999 Hz and the allocation hooks at the
# default 512 KiB); jemalloc preloaded; jemalloc with its own sampled heap
# profiler at the same mean (MALLOC_CONF=prof:true,lg_prof_sample:19);
# heaptrack (every allocation, with its stack).  A mode whose tool is missing
# is left out, and the line says why.  Not part of ctest.
#
# Targets (issue 34, item 5): torch with --memory <= 1.05x plain, malloc
# with --memory <= 1.15x plain.  The cbottleneck rows include the CPU
# sampler; "--memory alone" divides by the cbottleneck row, which is the
# part the allocation hooks add.
# Usage: bench/memory_loop.sh [BUILD_DIR]   (default: build)
# Env: RUNS (5), STEPS (1000 timed steps, after 200 of warm-up), OPS
#      (2000000), HOT_OPS (20000000), PROGRAMS ("torch malloc hot"), MODES
#      ("plain cbn mem je jeprof heaptrack"), JEMALLOC (the Debian path of
#      libjemalloc.so.2).
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
CBN="$BUILD/cbottleneck"
RUNS=${RUNS:-5}
STEPS=${STEPS:-1000}
OPS=${OPS:-2000000}
HOT_OPS=${HOT_OPS:-20000000}
PROGRAMS=${PROGRAMS:-"torch malloc hot"}
MODES=${MODES:-"plain cbn mem je jeprof heaptrack"}
JEMALLOC=${JEMALLOC:-/usr/lib/x86_64-linux-gnu/libjemalloc.so.2}
PY3=/usr/bin/python3
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cbn-memloop.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

die() { echo "memory_loop.sh: $*" >&2; exit 1; }
[ -x "$CBN" ] || die "no launcher at $CBN; build first (cmake --build $BUILD)"
[ -e "$BUILD/lib/libcbottleneck_mem.so" ] || die "no $BUILD/lib/libcbottleneck_mem.so; build first"
cc -std=c11 -D_GNU_SOURCE -O2 -g "$SRC/bench/malloc_loop.c" -o "$TMP/malloc_loop" ||
	die "cannot build bench/malloc_loop.c"

# What can run here, and why not.
declare -A WHY=()
if [[ " $PROGRAMS " == *" torch "* ]] && ! "$PY3" -c 'import torch' 2>/dev/null; then
	WHY[torch]="$PY3 cannot import torch (apt-get install python3-torch)"
fi
[ -e "$JEMALLOC" ] || { WHY[je]="$JEMALLOC missing (apt-get install libjemalloc2)"; WHY[jeprof]=${WHY[je]}; }
if [ -z "${WHY[je]:-}" ] &&
	LD_PRELOAD=$JEMALLOC MALLOC_CONF=prof:true /bin/true 2>&1 | grep -q 'Invalid conf'; then
	WHY[jeprof]="this libjemalloc was built without --enable-prof"
fi
command -v heaptrack >/dev/null || WHY[heaptrack]="heaptrack not installed (apt-get install heaptrack)"
progs=() modes=()
for p in $PROGRAMS; do [ -z "${WHY[$p]:-}" ] && progs+=("$p"); done
for m in $MODES; do [ -z "${WHY[$m]:-}" ] && modes+=("$m"); done
[[ " ${modes[*]} " == *" plain "* ]] || die "MODES must hold plain (the ratios' base)"

cmd_of()  # cmd_of PROGRAM: the command line
{
	case $1 in
	torch) echo "$PY3 $SRC/bench/torch_mlp.py $STEPS" ;;
	malloc) echo "$TMP/malloc_loop $OPS" ;;
	hot) echo "$TMP/malloc_loop $HOT_OPS hot" ;;
	*) die "unknown program $1" ;;
	esac
}

# run_one MODE PROGRAM: appends the program's figures ("value cpu", NaN when
# it has none) to $TMP/f.PROGRAM.MODE.
run_one()
{
	local mode=$1 prog=$2 rc=0 line
	local -a cmd
	read -r -a cmd <<<"$(cmd_of "$prog")"
	rm -rf "$TMP/sess" "$TMP"/ht.* "$TMP"/jeprof.*
	case $mode in
	plain) (cd "$TMP" && "${cmd[@]}") >"$TMP/out" 2>"$TMP/err" || rc=$? ;;
	cbn) "$CBN" -q --no-cuda -o "$TMP/sess" -- "${cmd[@]}" >"$TMP/out" 2>"$TMP/err" || rc=$? ;;
	mem) "$CBN" -q --no-cuda --memory -o "$TMP/sess" -- "${cmd[@]}" >"$TMP/out" 2>"$TMP/err" ||
		rc=$? ;;
	je) (cd "$TMP" && LD_PRELOAD=$JEMALLOC "${cmd[@]}") >"$TMP/out" 2>"$TMP/err" || rc=$? ;;
	jeprof) (cd "$TMP" && LD_PRELOAD=$JEMALLOC MALLOC_CONF=prof:true,lg_prof_sample:19 \
		"${cmd[@]}") >"$TMP/out" 2>"$TMP/err" || rc=$? ;;
	heaptrack) heaptrack -o "$TMP/ht" "${cmd[@]}" >"$TMP/out" 2>"$TMP/err" || rc=$? ;;
	esac
	line=$(grep -E '^(torch_mlp|malloc_loop): ' "$TMP/out" | tail -1 || true)
	if [ "$rc" != 0 ] || [ -z "$line" ]; then
		echo "memory_loop.sh: $prog under $mode failed (exit $rc): $(tail -1 "$TMP/err")" >&2
		echo "NaN NaN" >>"$TMP/f.$prog.$mode"
		return
	fi
	case $prog in
	torch) awk '{ for (i = 1; i < NF; i++) if ($i == "median_ms") print $(i + 1), "NaN" }' \
		<<<"$line" >>"$TMP/f.$prog.$mode" ;;
	malloc | hot) awk '{ for (i = 1; i < NF; i++) { if ($i == "ms") w = $(i + 1)
		if ($i == "cpu_ms") c = $(i + 1) } print w, c }' <<<"$line" >>"$TMP/f.$prog.$mode" ;;
	esac
}

med()  # med FILE COLUMN: median, min and max of a column ("NaN NaN NaN" if none)
{
	awk -v c="$2" '$c != "NaN" { print $c }' "$1" | sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "NaN NaN NaN"; exit }
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		print m, v[1], v[NR] }'
}

name_of()
{
	case $1 in
	plain) echo "plain" ;;
	cbn) echo "cbottleneck" ;;
	mem) echo "cbottleneck --memory" ;;
	je) echo "jemalloc" ;;
	jeprof) echo "jemalloc prof 2^19" ;;
	heaptrack) echo "heaptrack" ;;
	esac
}

echo "--memory on allocation-bound loops: each program's own figure, median of $RUNS interleaved runs, ratio to plain"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), Linux $(uname -r); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "torch: bench/torch_mlp.py, median of $STEPS steps; malloc: bench/malloc_loop.c $OPS, the loop's wall (and CPU) time; hot: malloc_loop $HOT_OPS hot"
for k in "${!WHY[@]}"; do echo "left out: $k: ${WHY[$k]}"; done
echo

# hot is for the cost of a call: plain, cbottleneck and --memory only.
modes_of()
{
	local m
	for m in "${modes[@]}"; do
		[ "$1" != hot ] || [[ " plain cbn mem " == *" $m "* ]] && echo "$m"
	done
}

for p in "${progs[@]}"; do
	for ((r = 0; r < RUNS; r++)); do
		for m in $(modes_of "$p"); do run_one "$m" "$p"; done
	done
done

declare -A RATIO=()
for p in "${progs[@]}"; do
	read -r base _ _ <<<"$(med "$TMP/f.$p.plain" 1)"
	read -r cbase _ _ <<<"$(med "$TMP/f.$p.plain" 2)"
	if [ "$p" = torch ]; then
		printf '%-22s %10s %21s %8s\n' "torch_mlp" "step ms" "min..max" "ratio"
	else
		title=malloc_loop
		[ "$p" = hot ] && title="malloc_loop hot"
		printf '%-22s %10s %21s %8s %10s %8s\n' "$title" "loop ms" "min..max" "ratio" \
			"cpu ms" "ratio"
	fi
	for m in $(modes_of "$p"); do
		read -r v lo hi <<<"$(med "$TMP/f.$p.$m" 1)"
		read -r c _ _ <<<"$(med "$TMP/f.$p.$m" 2)"
		RATIO[$p.$m]=$(awk -v v="$v" -v b="$base" 'BEGIN {
			print (v == "NaN" || b == "NaN" || b == 0) ? "NaN" : v / b }')
		awk -v n="$(name_of "$m")" -v v="$v" -v lo="$lo" -v hi="$hi" -v r="${RATIO[$p.$m]}" \
			-v c="$c" -v cb="$cbase" -v p="$p" 'BEGIN {
			printf "%-22s %10.4g %10.4g..%-10.4g %7.2fx", n, v, lo, hi, r
			if (p != "torch")
				printf " %10.4g %7.2fx", c, (c == "NaN" || cb == "NaN") ? 0 / 1e-300 : c / cb
			printf "\n" }'
	done
	echo
done

# over P A B: ratio A / B of program P's medians ("NaN" when either is absent)
over()
{
	awk -v a="${RATIO[$1.$2]:-NaN}" -v b="${RATIO[$1.$3]:-NaN}" 'BEGIN {
		print (a == "NaN" || b == "NaN") ? "NaN" : sprintf("%.2f", a / b) }'
}

verdict()  # verdict PROGRAM LIMIT WHAT
{
	local r=${RATIO[$1.mem]:-NaN}
	awk -v r="$r" -v lim="$2" -v what="$3" -v alone="$(over "$1" mem cbn)" \
		-v je="$(over "$1" jeprof je)" 'BEGIN {
		if (r == "NaN") { printf "target: %s with --memory <= %sx plain: not measured\n", what, lim; exit }
		printf "target: %s with --memory <= %sx plain: %.2fx, %s", what, lim, r,
			(r <= lim) ? "met" : "NOT met"
		printf "; --memory alone (against cbottleneck without it) %sx", alone
		if (je != "NaN")
			printf "; jemalloc prof against jemalloc %sx", je
		printf "\n" }'
}

[ -n "${RATIO[torch.mem]:-}" ] && verdict torch 1.05 "the dispatch-bound PyTorch loop"
[ -n "${RATIO[malloc.mem]:-}" ] && verdict malloc 1.15 "the malloc/free loop"
# The hooks' own cost per call: a loop's CPU time with --memory less without,
# over its calls (a malloc and a free per operation).
for p in malloc hot; do
	[ -n "${RATIO[$p.mem]:-}" ] && [ -n "${RATIO[$p.cbn]:-}" ] || continue
	read -r cm _ _ <<<"$(med "$TMP/f.$p.mem" 2)"
	read -r cc _ _ <<<"$(med "$TMP/f.$p.cbn" 2)"
	n=$OPS
	[ "$p" = hot ] && n=$HOT_OPS
	awk -v a="$cm" -v b="$cc" -v n="$n" -v p="$p" 'BEGIN {
		if (a != "NaN" && b != "NaN")
			printf "--memory per call, %s loop: %.1f ns of CPU (median CPU time with it less without, over %d calls)\n", p, (a - b) * 1e6 / (2 * n), 2 * n }'
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
