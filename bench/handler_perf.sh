#!/usr/bin/env bash
# handler_perf.sh — what the sampling handler costs a sample, by `perf`'s own
# samples of the agent's code, for two or more settings of the agent run
# alternately on the same program (docs/performance.md, "Prefetching the
# last sample's frames").  On a shared VM the handler's own figure (the
# report's "Profiler overhead" line) is wall time and moves with the host's
# load; `perf record` counts where the program's thread spent its CPU, so
# the agent's share over the run, divided by the samples taken, is a CPU
# cost per sample that is steadier from run to run.  perf's own interrupts
# (at PERF_HZ) slow everything alike, so compare the settings, not the
# absolute figures.
#
# Usage: bench/handler_perf.sh [BUILD_DIR] -- PROGRAM [ARGS...]
# Env:   VARIANTS  settings to compare, each VAR=VALUE[,VAR=VALUE] or "-"
#                  for none ("CBN_PREFETCH=1 CBN_PREFETCH=0")
#        RUNS      rounds, each running every variant once (3)
#        PERF_HZ   perf's frequency (10000); HZ: cbottleneck's (999)
# Per run it prints: the cbottleneck samples; the agent's CPU per sample
# (all of libcbottleneck.so), the Python walk's (python_stack), the native
# walk's (fw_step, the FDE search and the rule reader) and the report's own
# handler figure; then each variant's medians.  Not part of ctest.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD="$SRC/build"
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
	BUILD=$1
	shift
fi
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "usage: bench/handler_perf.sh [BUILD_DIR] -- PROGRAM [ARGS...]" >&2; exit 2; }
BUILD=$(cd "$BUILD" && pwd)
CBN="$BUILD/cbottleneck"
VARIANTS=${VARIANTS:-"CBN_PREFETCH=1 CBN_PREFETCH=0"}
RUNS=${RUNS:-3}
PERF_HZ=${PERF_HZ:-10000}
HZ=${HZ:-999}
[ -x "$CBN" ] || { echo "handler_perf.sh: no launcher at $CBN; build first" >&2; exit 1; }
command -v perf >/dev/null || { echo "handler_perf.sh: needs perf (linux-perf)" >&2; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cbn-hperf.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

for r in $(seq "$RUNS"); do
	for v in $VARIANTS; do
		envs=()
		[ "$v" = "-" ] || IFS=, read -r -a envs <<<"$v"
		rm -rf "$TMP/rep" "$TMP/p.data"
		env "${envs[@]}" perf record -q -F "$PERF_HZ" -o "$TMP/p.data" -- \
			"$CBN" -v -F "$HZ" --report "$TMP/rep" -- "$@" >/dev/null 2>&1 ||
			{ echo "handler_perf.sh: the run under $v failed" >&2; exit 1; }
		perf report -i "$TMP/p.data" --stdio -n --sort dso,sym 2>/dev/null |
			grep libcbottleneck >"$TMP/syms" || true
		python3 - "$v" "$TMP/rep" "$TMP/syms" "$PERF_HZ" <<'EOF' | tee -a "$TMP/rows"
import re, sys
v, rep, syms, hz = sys.argv[1], open(sys.argv[2]).read(), open(sys.argv[3]).read(), float(sys.argv[4])
ns = int(re.search(r"Samples: +(\d+)", rep).group(1))
h = re.search(r"([0-9.]+)ms in the sampling handler", rep)
tot = py = fw = 0
for line in syms.splitlines():
    f = line.split()
    n = int(f[1])
    tot += n
    if f[-1] == "python_stack":
        py += n
    if re.match(r"(fw_step|fw_read|cfi_rule_at|find_fde)", f[-1]):
        fw += n
us = lambda n: n / hz / ns * 1e6
print("%s samples %d agent_us %.2f pywalk_us %.2f walk_us %.2f handler_us %.1f"
      % (v, ns, us(tot), us(py), us(fw), float(h.group(1)) * 1000 / ns if h else float("nan")))
EOF
	done
done
echo "medians over $RUNS rounds:"
python3 - "$TMP/rows" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    rows.setdefault(f[0], []).append([float(x) for x in f[4::2]])
for v, rs in rows.items():
    med = [statistics.median(c) for c in zip(*rs)]
    print("  %-28s agent %.2f us, Python walk %.2f us, native walk %.2f us, handler (report) %.1f us a sample" % (v, *med))
EOF
