#!/bin/bash
# gpu_split.sh — where a kernel launch's added host time goes, on a real GPU
# (issue "Light on the GPU path, round two", item 1).  examples/cuda/tiny_kernels
# times its own launch loop (host µs per launch, empty kernels); this runs it
# plainly and under cbottleneck with the CUDA layer taken apart by its
# measuring settings (src/agent/cuda/selftime.c), ROUNDS times interleaved,
# and prints the medians and the split by differences:
#
#   activity buffers   CBN_CUDA_SPLIT=nocb  - --no-cuda   (CUPTI's kernel records)
#   CUPTI dispatch     CBN_CUDA_SPLIT=empty - nocb        (callbacks that do nothing)
#   our bookkeeping    CBN_CUDA_SPLIT=norec - empty       (clock, depth, agent guard)
#   records            CBN_CUDA_STACKS=0    - norec       (API records)
#   launch stacks      defaults             - CBN_CUDA_STACKS=0
#
# then one run with CBN_CUDA_SELFTIME, which times the layer's parts from
# inside and counts callbacks and call-path cache misses.  Not part of ctest.
#
# Usage: bench/gpu_split.sh [SCALE] [ROUNDS]   (CBN=path/to/cbottleneck,
#        PROG=path/to/tiny_kernels; defaults: the bundle's or build's)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
scale=${1:-2}
rounds=${2:-5}
cbn=${CBN:-$here/../cbottleneck}
[ -x "$cbn" ] || cbn=$here/../build/cbottleneck
prog=${PROG:-$(dirname "$cbn")/examples/tiny_kernels}
[[ -x $prog && -x $cbn ]] || { echo "gpu_split: no $cbn or $prog" >&2; exit 2; }
"$prog" 0.001 >/dev/null 2>&1 || { echo "gpu_split: no usable GPU" >&2; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/cbn-gpu-split.XXXXXX")
trap 'rm -rf "$T"' EXIT
export CBN_SYMCACHE_DIR=${CBN_SYMCACHE_DIR:-$T/symcache}
per_launch() { sed -n 's/.*, \([0-9.]*\) us\/launch.*/\1/p'; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
# SPLIT_NAMES="plain full ...": only these (plain first)
read -r -a names <<<"${SPLIT_NAMES:-plain no-cuda nocb empty norec nostacks full nodriver locked}"
declare -A us
run() { # VARIANT: host µs per launch
	case $1 in
	plain) "$prog" "$scale" ;;
	no-cuda) "$cbn" -q --no-cuda --report /dev/null -- "$prog" "$scale" ;;
	nocb | empty | norec | locked) CBN_CUDA_SPLIT=$1 "$cbn" -q --report /dev/null -- "$prog" "$scale" ;;
	nostacks) CBN_CUDA_STACKS=0 "$cbn" -q --report /dev/null -- "$prog" "$scale" ;;
	full) "$cbn" -q --report /dev/null -- "$prog" "$scale" ;;
	nodriver) CBN_CUDA_DRIVER=0 "$cbn" -q --report /dev/null -- "$prog" "$scale" ;;
	esac 2>"$T/err" | per_launch
}
for ((r = 0; r < rounds; r++)); do
	for v in "${names[@]}"; do
		x=$(run "$v")
		[ -n "$x" ] || { echo "gpu_split: $v failed: $(tail -n 2 "$T/err")" >&2; x=nan; }
		us[$v]="${us[$v]:-} $x"
	done
done
declare -A m
for v in "${names[@]}"; do
	# shellcheck disable=SC2086
	m[$v]=$(median ${us[$v]})
done
n=$(awk -v s="$scale" 'BEGIN {printf "%d", s * 10000}')
echo "gpu_split: tiny_kernels $scale ($n launches), median of $rounds interleaved runs, host us per launch"
for v in "${names[@]}"; do
	awk -v v="$v" -v a="${m[$v]}" -v p="${m[plain]}" -v all="${us[$v]}" \
		'BEGIN { printf "  %-10s %8.3f us  (%+.3f)   runs:%s\n", v, a, a - p, all }'
done
diff() {
	[[ -n ${m[$2]:-} && -n ${m[$3]:-} ]] || return 0
	awk -v a="${m[$2]}" -v b="${m[$3]}" -v l="$1" 'BEGIN { printf "  %-22s %+8.3f us\n", l, a - b }'
}
echo "split (differences of medians):"
diff "CPU sampling" no-cuda plain
diff "activity buffers" nocb no-cuda
diff "CUPTI dispatch" empty nocb
diff "our bookkeeping" norec empty
diff "API records" nostacks norec
diff "launch stacks" full nostacks
diff "driver callbacks" full nodriver
diff "locked records" locked full
echo "inside the layer (CBN_CUDA_SELFTIME, one run; ns per launch = total / $n):"
# SPLIT_SELFTIME="CBN_CUDA_SPLIT=locked ...": one more run with each setting
for extra in "" ${SPLIT_SELFTIME:-}; do
	echo "  ${extra:-defaults}:"
	env $extra CBN_CUDA_SELFTIME="$T/self" "$cbn" -q --report /dev/null -- "$prog" "$scale" 2>&1 |
		sed 's/^/  /'
	awk -F'\t' -v n="$n" '/^#/ { next } NF >= 4 { printf "  %-44s %9s calls %8.1f ns each %8.1f ns/launch\n", $1, $2, $4, $3 / n; next }
		{ printf "  %-44s %9s\n", $1, $2 }' "$T/self"
done
