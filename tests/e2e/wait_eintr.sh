#!/bin/bash
# wait_eintr — the off-CPU sampler interrupts nothing: examples/wait_eintr.c
# counts EINTR from nanosleep, poll and pipe reads (200 each) while a thread
# computes; under --off-cpu=1000 (the sampler's highest rate, looking at the
# blocked threads about once per call) it must see none, print the same as
# without the profiler and exit the same; and the sampler must have seen
# those waits (so the test is not passing on an idle sampler).
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example wait_eintr
PY=/usr/bin/python3

set +e
"$EXAMPLES/wait_eintr" >"$T/plain.out" 2>"$T/plain.err"
prc=$?
set -e
[ "$prc" = 0 ] || fail "the example fails without the profiler (exit $prc): $(cat "$T/plain.out" "$T/plain.err")"

for hz in 1000 100; do
	run_cbn --off-cpu=$hz --json "$T/r$hz.json" -- "$EXAMPLES/wait_eintr"
	grep -E '^(nanosleep|poll|read): ' "$OUTF" >"$T/prof.out" || true
	if ! cmp -s "$T/plain.out" "$T/prof.out"; then
		diff "$T/plain.out" "$T/prof.out" >&2 || true
		fail "--off-cpu=$hz: the program's output differs from the plain run's"
	fi
	expect_rc "$prc"
	$PY - "$T/r$hz.json" "$hz" <<'PYEOF' || fail "--off-cpu=$hz: the sampler did not see the waits"
import json, sys
w = json.load(open(sys.argv[1]))["waiting"]
assert w["offcpu"] is True and w["rate_hz"] == int(sys.argv[2]), (w["offcpu"], w["rate_hz"])
k = w["off_cpu"]
print("# --off-cpu=%s: sleep %.0f ms, poll %.0f ms, io %.0f ms" % (sys.argv[2], k["sleep"] / 1e6,
      k["poll"] / 1e6, k["io"] / 1e6), file=sys.stderr)
assert k["sleep"] > 0 and k["poll"] > 0, k
PYEOF
done
exit 0
