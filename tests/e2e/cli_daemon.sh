#!/bin/bash
# cli_daemon — the launcher is a child subreaper: it waits for daemonized
# grandchildren (setsid, parent exited) before it reads the session, and
# their profiles are part of the report.
. "$(dirname "$0")/lib/common.bash"
need_cbn

start=$(date +%s%N)
run_cbn -q --json "$T/r.json" --report "$T/r.txt" -- sh -c \
	"(setsid sh -c 'sleep 1; echo done >\"$T/flag\"' &) ; exit 0"
end=$(date +%s%N)
expect_rc 0
[ -f "$T/flag" ] || fail "the launcher returned before the daemonized grandchild finished"
[ $(((end - start) / 1000000)) -ge 900 ] || fail "returned after $(((end - start) / 1000000)) ms, before the grandchild's 1 s sleep"
procs=$(json_get "$T/r.json" run.processes)
[ "$procs" -ge 3 ] || fail "expected the grandchildren's processes in the report, got $procs"
exit 0
