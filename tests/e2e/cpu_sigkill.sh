#!/bin/bash
# cpu_sigkill — a target that SIGKILLs itself (nothing runs at exit): exit
# status 137 and the samples of before_kill are kept.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example sigkill

run_cbn --json "$T/r.json" -- "$EXAMPLES/sigkill" "$SCALE"
expect_rc 137
grep -Eqi 'signal 9|SIGKILL|killed' "$ERRF" || fail "no stderr line about SIGKILL"
bk=$(json_func_field "$T/r.json" before_kill self_ns)
cpu=$(json_get "$T/r.json" run.cpu_ns)
note "before_kill self_ns=$bk of $cpu"
python3 -c "import sys; sys.exit(0 if $bk >= 0.7 * $cpu and $bk > 0 else 1)" ||
	fail "before_kill has $bk ns of $cpu: samples were lost with the SIGKILL"
[ "$(json_get "$T/r.json" 'processes[0].clean_exit')" = False ] ||
	fail "processes[0].clean_exit should be false after SIGKILL"
grep_out '^  Exit:       killed by signal 9 \(SIGKILL\)$'
exit 0
