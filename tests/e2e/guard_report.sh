#!/bin/bash
# guard_report — what the agent stopped or could not follow because of the
# program's own sandboxes and credentials is named in Data quality and in
# --json's warnings: a seccomp filter with TSYNC, strict mode, an exec under
# a filter, an exec after dropping to nobody (root only); and no record of
# ours reads as damage.
. "$(dirname "$0")/lib/common.bash"
need_cbn
H=$CBN_BUILD_DIR/tests/hostile
[ -d "$H" ] || skip "this build leaves out the hostile programs (-DCBN_TESTS_HOSTILE=OFF)"
need_built "$H/seccomp_tsync" "$H/seccomp_strict" "$H/seccomp_exec" "$H/setuid_exec"

# run_guard PROG: the report in $OUTF, its JSON in $T/PROG.json.
run_guard()
{
	run_cbn --json "$T/$1.json" -- "$H/$1"
	[ "$RC" = 0 ] || fail "$1: exit status $RC"
	grep -q 'corrupted\|skipped [0-9]* records' "$OUTF" && fail "$1: a record of ours read as damage"
	return 0
}

run_guard seccomp_tsync
grep_out 'pid [0-9]*: the program put all its threads under a seccomp filter \(TSYNC\) [0-9.]* s after it started: sampling of its 4 threads'
python3 - "$T/seccomp_tsync.json" <<'PY' || fail "the TSYNC line is not in --json's warnings"
import json, sys
w = json.load(open(sys.argv[1]))["warnings"]
sys.exit(0 if any("seccomp filter (TSYNC)" in x for x in w) else 1)
PY

run_guard seccomp_strict
grep_out 'pid [0-9]*: thread [0-9]* entered a seccomp strict mode of the program.s'

run_guard seccomp_exec
grep_out "hostile_helper was not profiled: it was exec'd under a seccomp filter of the program's"

if [ "$(id -u)" = 0 ] && getent passwd nobody >/dev/null; then
	run_guard setuid_exec
	grep_out "hostile_helper was not profiled: it was exec'd as uid 65534"
	# the image it replaced did not crash, and child 1's _exit after fork
	# is what a forked child does: neither is reported as a problem
	n=$(grep -c 'ended without exiting normally' "$OUTF" || true)
	[ "$n" = 0 ] || fail "setuid_exec: $n 'ended without exiting normally' lines, want none"
else
	note "not root or no user nobody: the exec after setuid is not checked"
fi
exit 0
