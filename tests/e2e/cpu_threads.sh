#!/bin/bash
# cpu_threads — 4 named worker threads burning 1:2:3:4 units and main burning
# 1 unit are each attributed, in the right proportions (±25 %), with names.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example threads
need_python_jsonschema

run_cbn -F 1000 --json "$T/r.json" -- "$EXAMPLES/threads" 0.8
expect_rc 0
validate_schema "$T/r.json"

# per worker thread: CPU share of the four workers must be i/10 ± 25 %
python3 - "$T/r.json" <<'PY' || fail "thread weights are not 1:2:3:4"
import json, sys
d = json.load(open(sys.argv[1]))
th = {t["name"]: t for t in d["threads"]}
names = ["worker-%d" % i for i in range(1, 5)]
missing = [n for n in names if n not in th]
if missing:
    sys.exit("threads missing by name: %s (have %s)" % (missing, sorted(th)))
tot = sum(th[n]["cpu_ns"] for n in names)
ok = True
for i, n in enumerate(names, 1):
    share = th[n]["cpu_ns"] / tot if tot else 0
    exp = i / 10
    print("# %s: %.3f of the workers (expected %.2f)" % (n, share, exp), file=sys.stderr)
    if abs(share - exp) > 0.25 * exp:
        ok = False
# main burns 1 unit: about worker-1's share, on a thread that is not a worker
others = [t for t in d["threads"] if t["name"] not in names]
main = max(others, key=lambda t: t["cpu_ns"]) if others else None
if not main or main["cpu_ns"] <= 0:
    sys.exit("no samples on the main thread")
r = main["cpu_ns"] / th["worker-1"]["cpu_ns"] if th["worker-1"]["cpu_ns"] else 0
print("# main/worker-1 = %.2f (expected 1)" % r, file=sys.stderr)
if abs(r - 1) > 0.4:
    ok = False
sys.exit(0 if ok else 1)
PY

ws=$(json_func_field "$T/r.json" worker_spin self_ns)
ms=$(json_func_field "$T/r.json" main_spin self_ns)
[ "$ws" -gt 0 ] && [ "$ms" -gt 0 ] || fail "worker_spin ($ws) or main_spin ($ms) has no self time"
within "$(python3 -c "print($ws / ($ws + $ms))")" 0.909 0.1 ||
	fail "worker_spin share $(python3 -c "print($ws / ($ws + $ms))") of spin time, expected 10/11"
[ "$(json_get "$T/r.json" run.threads)" -ge 5 ] || fail "run.threads < 5"

# the text report has the per-thread table with the names
grep_out '^Threads$'
for i in 1 2 3 4; do
	grep_out "^ +[0-9]+  worker-$i +[0-9]+ "
done
grep_out 'worker_spin\)$'
exit 0
