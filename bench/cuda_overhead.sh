#!/bin/bash
# cuda_overhead.sh — host cost per kernel launch of the CUDA layer, on the
# simulated CUPTI: N fakecuda_launch calls made from 10 and from 150 native
# frames deep (an interpreter's launch stacks are 100-200 frames deep), run
# plainly and under cbottleneck (the real agent: callbacks, launch stacks,
# records into the session file, CPU sampling), each the best of 3, in one
# invocation; prints the added ns per launch.  Target: <= 1000 ns at 150.
# Then CBN_CUDA_STACKS=0, and an in-process stand-in for the agent (records
# copied into memory, stacks by libunwind each time: the layer alone).
# Usage: bench/cuda_overhead.sh [BUILD_DIR] [N]
set -euo pipefail
build=${1:-${CBN_BUILD_DIR:-build}}
n=${2:-200000}
prog=$build/tests/cuda/cuda_overhead
prog2=$build/tests/cuda/cuda_overhead_agent
lib=$build/lib/libcbottleneck_cuda.so
cbn=$build/cbottleneck
if [[ ! -x $prog || ! -x $prog2 || ! -f $lib || ! -x $cbn ]]; then
	echo "cuda_overhead: build first (cmake --build $build)" >&2
	exit 2
fi
export LD_LIBRARY_PATH=$build/tests/fakecupti${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ns() { sed -n 's/.*, \([0-9]*\) ns\/launch/\1/p'; }
best() { # CMD...: the best of 3 runs, ns/launch
	local b= v
	for _ in 1 2 3; do
		v=$("$@" | ns)
		if [[ -z $b || $v -lt $b ]]; then b=$v; fi
	done
	echo "$b"
}
under() { "$cbn" -q --report "$tmp/r.txt" -- "$@"; }

echo "cuda_overhead: $n simulated launches, best of 3, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '  %-40s %10s %10s %12s\n' "" "10 deep" "150 deep" "added at 150"
row() { # LABEL PLAIN10 PLAIN150 ON10 ON150
	printf '  %-40s %7s ns %7s ns %9s ns\n' "$1" "$4" "$5" "$(($5 - $3))"
}
p10=$(best "$prog2" "$n" off 10)
p150=$(best "$prog2" "$n" off 150)
printf '  %-40s %7s ns %7s ns\n' "plain (no layer, no agent)" "$p10" "$p150"
row "cbottleneck (defaults)" "$p10" "$p150" "$(best under "$prog2" "$n" on 10)" \
	"$(best under "$prog2" "$n" on 150)"
export CBN_CUDA_STACKS=0
row "cbottleneck, CBN_CUDA_STACKS=0" "$p10" "$p150" "$(best under "$prog2" "$n" on 10)" \
	"$(best under "$prog2" "$n" on 150)"
unset CBN_CUDA_STACKS
export CBN_CUDA_LAYER=$lib
s10=$(best "$prog" "$n" off 10)
s150=$(best "$prog" "$n" off 150)
row "stand-in agent (the layer alone)" "$s10" "$s150" "$(best "$prog" "$n" on 10)" \
	"$(best "$prog" "$n" on 150)"
