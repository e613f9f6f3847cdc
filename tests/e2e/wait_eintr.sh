#!/bin/bash
# wait_eintr — nothing of ours interrupts a blocked call.  The off-CPU
# sampler: examples/wait_eintr.c
# counts EINTR from nanosleep, poll and pipe reads (200 each) while a thread
# computes; under --off-cpu=1000 (the sampler's highest rate, looking at the
# blocked threads about once per call) it must see none, print the same as
# without the profiler and exit the same; and the sampler must have seen
# some of those waits (so the test is not passing on an idle sampler).  Capture
# windows: opened and closed 40 times from another process (cbottleneck ctl)
# while the threads wait in those calls, they see no EINTR either (a window
# that opened used to queue a signal to every thread).
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
# some of the three waits: on a loaded machine (load 4-5 on 2 CPUs) the
# short polls' waits were all taken for runnable time once, and at 100 Hz
# the sleeps' once (sleep 0 ms, poll 231 ms, io 23 ms, runnable 145 ms)
assert k["sleep"] + k["poll"] + k["io"] > 0, k
PYEOF
done

set +e
"$CBN" -q --report "$T/rctl.txt" -o "$T/sctl" --delay 1ms -- "$EXAMPLES/wait_eintr" 4000 \
	>"$T/ctl.out" 2>"$T/ctl.err" &
bg=$!
pid=
for _ in $(seq 100); do
	pid=$(pgrep -P "$bg" | head -1)
	[ -n "$pid" ] && "$CBN" ctl "$pid" status >/dev/null 2>&1 && break
	sleep 0.02
done
[ -n "$pid" ] || fail "ctl: the program did not start"
toggles=0
for _ in $(seq 40); do
	"$CBN" ctl "$pid" stop >/dev/null 2>&1 || break
	"$CBN" ctl "$pid" start >/dev/null 2>&1 || break
	toggles=$((toggles + 1))
	sleep 0.01
done
wait "$bg"
crc=$?
set -e
[ "$toggles" -ge 10 ] || fail "ctl: only $toggles windows opened while the program ran"
grep -E '^(nanosleep|poll|read): ' "$T/ctl.out" | grep -v 'eintr=0 ' &&
	fail "ctl: a call saw EINTR while $toggles windows opened and closed"
[ "$crc" = 0 ] || fail "ctl: exit status $crc: $(cat "$T/ctl.out" "$T/ctl.err")"
echo "# ctl: $toggles windows opened and closed, no EINTR" >&2
exit 0
