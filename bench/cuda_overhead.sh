#!/bin/bash
# cuda_overhead.sh — per-launch host overhead of the CUDA layer's callback path
# (ENTER/EXIT callbacks, host stack capture, API + stack records, and the
# activity record conversion running on the simulated CUPTI's worker thread),
# measured in the simulation: N launches with the layer minus N without it.
# Usage: bench/cuda_overhead.sh [BUILD_DIR] [N]   (target: <= 2000 ns/launch)
set -euo pipefail
build=${1:-${CBN_BUILD_DIR:-build}}
n=${2:-200000}
prog=$build/tests/cuda/cuda_overhead
lib=$build/lib/libcbottleneck_cuda.so
if [[ ! -x $prog || ! -f $lib ]]; then
	echo "cuda_overhead: build first (cmake --build $build --target cuda_overhead cbottleneck_cuda)" >&2
	exit 2
fi
best() { # best of 3 runs, in ns/launch
	local b=
	for _ in 1 2 3; do
		v=$(CBN_CUDA_LAYER=$lib "$prog" "$n" "$1" | sed -n 's/.*, \([0-9]*\) ns\/launch/\1/p')
		if [[ -z $b || $v -lt $b ]]; then b=$v; fi
	done
	echo "$b"
}
off=$(best off)
on=$(best on)
echo "in-process agent stand-in:"
echo "  simulated launch without layer: $off ns/launch"
echo "  simulated launch with layer:    $on ns/launch"
echo "  layer overhead:                 $((on - off)) ns/launch (target <= 2000)"

# The same under the real launcher and agent (its writer and unwinder).
cbn=$build/cbottleneck
prog2=$build/tests/cuda/cuda_overhead_agent
if [[ -x $cbn && -x $prog2 ]]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	best_agent() {
		local b=
		for _ in 1 2 3; do
			v=$("$cbn" --buffer-mb 256 --report "$tmp/report.txt" -- "$prog2" "$n" "$1" |
				sed -n 's/.*, \([0-9]*\) ns\/launch/\1/p')
			if [[ -z $b || $v -lt $b ]]; then b=$v; fi
		done
		echo "$b"
	}
	off=$(best_agent off)
	on=$(best_agent on)
	echo "under cbottleneck (real agent):"
	echo "  simulated launch without layer: $off ns/launch"
	echo "  simulated launch with layer:    $on ns/launch"
	echo "  layer overhead:                 $((on - off)) ns/launch (target <= 2000)"
fi
