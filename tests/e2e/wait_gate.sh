#!/bin/bash
# wait_gate — the off-CPU gates of `cbottleneck compare` (docs/ci.md) on real
# reports of examples/wait_lock.c: 15 periods (baseline) and 45 (current: the
# holder holds the lock three times as long in all, so the waiters wait about
# three times as long).
#   - lock[contend].wait:+50% fails from baseline to current (3x, far past
#     the ± 30 % a 100 Hz estimate of ~100 ms moves between runs) and passes
#     the other way (a drop is no regression);
#   - wait.total:+50% fails the same way (every thread waits longer);
#   - lock[no_such_function].wait matches no lock of the baseline: not a pass;
#   - a baseline recorded without --off-cpu is a configuration error (exit 2).
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example wait_lock

profile()
{
	run_cbn --off-cpu --json "$1" -- "$EXAMPLES/wait_lock" "$2"
	[ "$RC" = 0 ] && [ -s "$1" ] ||
		fail "profiling 'wait_lock $2' with --off-cpu --json failed (exit $RC)"
}
profile "$T/base.json" 15
profile "$T/more.json" 45

run_cbn compare --fail 'lock[contend].wait:+50%' --fail 'wait.total:+50%' "$T/base.json" "$T/more.json"
expect_rc 1
grep_out '^lock\[contend\]\.wait .*FAIL$'
grep_out '^wait\.total .*FAIL$'
grep_out '^FAIL: 2 regressions'

run_cbn compare --fail 'lock[contend].wait:+50%' --fail 'wait.total:+50%' "$T/more.json" "$T/base.json"
expect_rc 0
grep_out '^lock\[contend\]\.wait .* (ok|within noise)$'
grep_out '^PASS: 0 regressions'

run_cbn compare --fail 'lock[no_such_function].wait:+50%' "$T/base.json" "$T/more.json"
[ "$RC" != 0 ] || fail "a lock gate matching no lock passed (exit 0)"

run_cbn --json "$T/nooff.json" -- "$EXAMPLES/wait_lock" 15
expect_rc 0
run_cbn compare --fail 'wait.total:+50%' "$T/nooff.json" "$T/more.json"
expect_rc 2
exit 0
