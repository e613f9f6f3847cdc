#!/bin/bash
# cuda_gpu_overhead.sh — end-to-end host cost per kernel launch on a real GPU:
# examples/cuda/tiny_kernels times its own launch loop (host µs per launch);
# this runs it plainly, under cbottleneck with CPU sampling only (--no-cuda),
# and under cbottleneck with the CUDA layer, RUNS times each (interleaved),
# and prints the medians and the differences.  Not part of ctest (needs a GPU).
# Usage: bench/cuda_gpu_overhead.sh [BUILD_DIR] [SCALE] [RUNS]   (target <= 2 us/launch)
set -euo pipefail
build=${1:-build}
scale=${2:-2}
runs=${3:-5}
prog=$build/examples/tiny_kernels
cbn=$build/cbottleneck
[[ -x $prog && -x $cbn ]] || { echo "cuda_gpu_overhead: build first ($prog, $cbn)" >&2; exit 2; }
"$prog" 0.001 >/dev/null 2>&1 || { echo "cuda_gpu_overhead: no usable GPU ($("$prog" 0.001 2>&1 | tail -n 1))" >&2; exit 77; }
per_launch() { sed -n 's/.*, \([0-9.]*\) us\/launch.*/\1/p'; }
declare -a plain cpu cuda nostack nodrv light
for ((i = 0; i < runs; i++)); do
	plain+=("$("$prog" "$scale" | per_launch)")
	cpu+=("$("$cbn" -q --no-cuda --report /dev/null -- "$prog" "$scale" | per_launch)")
	cuda+=("$("$cbn" -q --report /dev/null -- "$prog" "$scale" | per_launch)")
	nostack+=("$(CBN_CUDA_STACKS=0 "$cbn" -q --report /dev/null -- "$prog" "$scale" | per_launch)")
	nodrv+=("$(CBN_CUDA_DRIVER=0 "$cbn" -q --report /dev/null -- "$prog" "$scale" | per_launch)")
	light+=("$(CBN_CUDA_STACKS=0 CBN_CUDA_DRIVER=0 "$cbn" -q --report /dev/null -- "$prog" "$scale" | per_launch)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
p=$(median "${plain[@]}"); c=$(median "${cpu[@]}"); g=$(median "${cuda[@]}")
ns=$(median "${nostack[@]}"); nd=$(median "${nodrv[@]}"); l=$(median "${light[@]}")
plus() { awk -v a="$1" -v b="$p" 'BEGIN{printf "%.3f", a-b}'; }
n=$(awk -v s="$scale" 'BEGIN {printf "%d", s * 10000}')
echo "tiny_kernels $scale ($n launches), median of $runs runs, host time per launch:"
printf '  plain                          %8.3f us\n' "$p"
printf '  cbottleneck --no-cuda          %8.3f us   (+%s us: CPU sampling only)\n' "$c" "$(plus "$c")"
printf '  cbottleneck (CUDA layer on)    %8.3f us   (+%s us per launch; target <= 2 us)\n' "$g" "$(plus "$g")"
printf '    CBN_CUDA_STACKS=0            %8.3f us   (+%s us)\n' "$ns" "$(plus "$ns")"
printf '    CBN_CUDA_DRIVER=0            %8.3f us   (+%s us)\n' "$nd" "$(plus "$nd")"
printf '    both                         %8.3f us   (+%s us)\n' "$l" "$(plus "$l")"
