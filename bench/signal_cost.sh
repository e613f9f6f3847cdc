#!/usr/bin/env bash
# signal_cost.sh — what a sampling signal costs the interrupted thread before
# any handler of ours runs: the perf event's timer interrupt, and the way the
# kernel raises the signal (bench/signal_cost.c says the modes).  The work is
# fixed, so each mode's extra CPU over `none`, divided by the signals it
# took, is the cost of one; `event` has the timer and no signal.  RUNS
# rounds, the modes interleaved; medians.  The handler is empty, so this is
# the part of a sample the report's "Profiler overhead" line does not count
# (docs/performance.md, "What a signal costs before the handler runs").
# Not part of ctest.  Usage: bench/signal_cost.sh
# Env: RUNS (5), HZ (10000: enough signals to stand out of this VM's noise),
#      ITERS (700000000, about 1 s)
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${RUNS:-5}
HZ=${HZ:-10000}
ITERS=${ITERS:-700000000}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cbn-sigcost.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

cc -std=c11 -D_GNU_SOURCE -O2 -g "$SRC/bench/signal_cost.c" -o "$TMP/signal_cost" ||
	{ echo "signal_cost.sh: cannot build bench/signal_cost.c" >&2; exit 1; }
modes="none event fasync sigtrap"
"$TMP/signal_cost" sigtrap 100 1000 >/dev/null 2>&1 || modes="none event fasync" # before 5.13
for r in $(seq "$RUNS"); do
	for m in $modes; do
		"$TMP/signal_cost" "$m" "$HZ" "$ITERS" >>"$TMP/rows"
	done
done
python3 - "$TMP/rows" "$HZ" "$(uname -r)" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    m, ms, n = line.split()
    rows.setdefault(m, []).append((float(ms), int(n)))
med = {m: statistics.median(v[0] for v in r) for m, r in rows.items()}
sig = {m: statistics.median(v[1] for v in r) for m, r in rows.items()}
base = med["none"]
print("%s Hz, Linux %s, %d rounds: the thread's CPU ms for the work (median), and per signal" %
      (sys.argv[2], sys.argv[3], len(rows["none"])))
for m in rows:
    r = rows[m]
    line = "  %-8s %8.1f ms (%.1f-%.1f)  %5.3fx" % (m, med[m], min(v[0] for v in r), max(v[0] for v in r), med[m] / base)
    if m == "event":
        ticks = med[m] * 1e3 / (1e6 / float(sys.argv[2]))
        line += "   %.2f us a timer interrupt" % ((med[m] - base) * 1e3 / ticks)
    elif sig[m]:
        line += "   %.2f us a signal, %.2f us over event" % ((med[m] - base) * 1e3 / sig[m],
                                                          (med[m] - med.get("event", base)) * 1e3 / sig[m])
    print(line)
PY
