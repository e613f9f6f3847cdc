#!/bin/bash
# gpu_step.sh — the cost of cbottleneck on a PyTorch training step, on a real
# GPU, as ratios to the plain run measured in the same invocation: the loop of
# bench/gpu_step.py (ResNet-18, batch 64 of 3x64x64, SGD; median of 20 steps
# after 5 warm-up steps) plainly, inside torch.profiler (CPU + CUDA), under
# cbottleneck (CUDA tracing on), with --no-cuda, with --memory and with both,
# ROUNDS times interleaved.  Targets: <= 1.05x with CUDA tracing, <= 1.15x
# with --memory; with --no-cuda (the CPU sampler) <= 1.03x, and --memory
# --no-cuda <= 1.08x.
#
# It then checks that the program's own profiler is unharmed: the same loop
# profiling a window of itself with torch.profiler sees as many kernels under
# cbottleneck as plainly, and cbottleneck's report names the span it stepped
# aside for (JSON cuda.shared[]).
#
# Needs only the NVIDIA driver, PyTorch (torchvision for ResNet-18) and
# cbottleneck; on a machine without the project's build dependencies use the
# bundle of tools/gpu_bundle.sh (CBN=DIR/cbottleneck).  Exits 77 without a GPU.
#
# GPU_STEP_EXTRA=1 adds variants that split the cost: --no-cuda without kernel
# stacks (CBN_KERNEL_STACKS=0), --no-cuda at 99 Hz, and CUDA tracing without
# launch stacks (CBN_CUDA_STACKS=0).
#
# GPU_STEP_VARIANTS="plain cbottleneck cb:CBN_CUDA_SPLIT=nocb ..." runs only these
# (plain first); cb:VAR=VALUE[,VAR=VALUE] is cbottleneck with those settings.
# GPU_STEP_SELFPROF=0 skips the torch.profiler check.
#
# Usage: bench/gpu_step.sh [ROUNDS] [MODEL]    (CBN=path/to/cbottleneck, PYTHON=python3)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=${1:-2}
model=${2:-resnet18}
cbn=${CBN:-$here/../build/cbottleneck}
py=${PYTHON:-python3}
step=("$py" "$here/gpu_step.py" --model "$model")
[ -x "$cbn" ] || { echo "gpu_step: no cbottleneck at $cbn (CBN=...)" >&2; exit 2; }
"$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
	{ echo "gpu_step: no usable GPU for PyTorch" >&2; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/cbn-gpu-step.XXXXXX")
trap 'rm -rf "$T"' EXIT
export CBN_SYMCACHE_DIR=${CBN_SYMCACHE_DIR:-$T/symcache}

field() { sed -n "s/.* $1 \([-0-9.]*\).*/\1/p" | tail -n 1; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

declare -A ms
variants=(plain profiler cbottleneck no-cuda memory memory-no-cuda)
[ "${GPU_STEP_EXTRA:-0}" = 1 ] && variants+=(no-cuda-no-kstacks no-cuda-99hz no-launch-stacks)
# GPU_STEP_VARIANTS="plain cbottleneck ...": only these (plain first)
[ -n "${GPU_STEP_VARIANTS:-}" ] && read -r -a variants <<<"$GPU_STEP_VARIANTS"
for ((r = 0; r < rounds; r++)); do
	for v in "${variants[@]}"; do
		case $v in
		plain) out=$("${step[@]}" 2>"$T/err") ;;
		profiler) out=$("${step[@]}" --profile 2>"$T/err") ;;
		cbottleneck) out=$("$cbn" -q --report /dev/null -- "${step[@]}" 2>"$T/err") ;;
		no-cuda) out=$("$cbn" -q --no-cuda --report /dev/null -- "${step[@]}" 2>"$T/err") ;;
		memory) out=$("$cbn" -q --memory --report /dev/null -- "${step[@]}" 2>"$T/err") ;;
		memory-no-cuda) out=$("$cbn" -q --memory --no-cuda --report /dev/null -- \
			"${step[@]}" 2>"$T/err") ;;
		no-cuda-no-kstacks) out=$(CBN_KERNEL_STACKS=0 "$cbn" -q --no-cuda --report /dev/null -- \
			"${step[@]}" 2>"$T/err") ;;
		no-cuda-99hz) out=$("$cbn" -q --no-cuda -F 99 --report /dev/null -- "${step[@]}" 2>"$T/err") ;;
		no-launch-stacks) out=$(CBN_CUDA_STACKS=0 "$cbn" -q --report /dev/null -- \
			"${step[@]}" 2>"$T/err") ;;
		# cb:VAR=VALUE[,VAR=VALUE]: cbottleneck with those settings
		# (bench/gpu_split.sh's measuring settings, CBN_CUDA_SPLIT ...)
		cb:*) IFS=, read -r -a kv <<<"${v#cb:}"
			out=$(env "${kv[@]}" "$cbn" -q --report /dev/null -- "${step[@]}" 2>"$T/err") ;;
		esac
		m=$(printf '%s\n' "$out" | field median_ms)
		[ -n "$m" ] || { echo "gpu_step: $v failed: $(tail -n 3 "$T/err")" >&2; m=nan; }
		ms[$v]="${ms[$v]:-} $m"
		echo "# round $r $v: $m ms" >&2
	done
done
# shellcheck disable=SC2086
p=$(median ${ms[plain]})
echo "gpu_step: $model, median step time over $rounds interleaved rounds (each the median of 20 steps)"
printf '  %-28s %10s %8s %s\n' run "step (ms)" "x plain" target
for v in "${variants[@]}"; do
	# shellcheck disable=SC2086
	m=$(median ${ms[$v]})
	t=""
	[ "$v" = cbottleneck ] && t="<= 1.05"
	[ "$v" = memory ] && t="<= 1.15"
	[ "$v" = no-cuda ] && t="<= 1.03"
	[ "$v" = memory-no-cuda ] && t="<= 1.08"
	awk -v v="$v" -v m="$m" -v p="$p" -v t="$t" \
		'BEGIN { printf "  %-28s %10.3f %8.3f %s\n", v, m, (p > 0 ? m / p : 0), t }'
done

[ "${GPU_STEP_SELFPROF:-1}" = 0 ] && exit 0
# The program's own torch.profiler, with and without cbottleneck.
plainp=$("${step[@]}" --selfprof 2>"$T/err" | field kernels)
profp=$("$cbn" -q --report "$T/sp.txt" --json "$T/sp.json" -- "${step[@]}" --selfprof 2>"$T/err" |
	field kernels)
echo "torch.profiler inside the loop: $plainp kernels plainly, $profp under cbottleneck" \
	"($([ "$plainp" = "$profp" ] && echo same || echo DIFFERENT))"
"$py" - "$T/sp.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])).get("cuda") or {}
print("  cbottleneck: %s kernels of its own, %.3f ms of kernel time" %
      (c.get("totals", {}).get("kernels"), c.get("totals", {}).get("kernel_ns", 0) / 1e6))
for s in c.get("shared", []):
    print("  stepped aside: %s held by %s from %.3f s to %s" %
          (s["what"], s["holder"], s["start_ns"] / 1e9,
           "%.3f s" % (s["end_ns"] / 1e9) if s["end_ns"] is not None else "the end"))
PY
[ "$plainp" = "$profp" ]
