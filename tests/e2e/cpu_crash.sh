#!/bin/bash
# cpu_crash — a target that dies of SIGSEGV: exit status 139, a stderr line
# saying so, and the samples taken before the crash are kept and reported.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example crash

run_cbn --json "$T/r.json" -- "$EXAMPLES/crash" "$SCALE"
expect_rc 139
grep -Eqi 'signal 11|SIGSEGV|segmentation' "$ERRF" || fail "no stderr line about SIGSEGV"
[ -s "$T/r.json" ] || fail "no JSON report after the crash"
[ "$(json_get "$T/r.json" run.exit_signal)" = 11 ] || fail "run.exit_signal is not 11"
bc=$(json_func_field "$T/r.json" before_crash self_ns)
cpu=$(json_get "$T/r.json" run.cpu_ns)
note "before_crash self_ns=$bc of $cpu"
python3 -c "import sys; sys.exit(0 if $bc >= 0.7 * $cpu and $bc > 0 else 1)" ||
	fail "before_crash has $bc ns of $cpu: samples before the crash were lost"
grep_out '^  Exit:       killed by signal 11 \(SIGSEGV\)$'
grep_out 'crash\.c:[0-9]+\(before_crash\)$'
exit 0
