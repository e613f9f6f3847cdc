#!/bin/bash
# cli_daemon — the launcher is a child subreaper: it waits for daemonized
# grandchildren (setsid, parent exited) before it reads the session, and
# their profiles are part of the report.
# ctest-labels: sanitize (the ASan+UBSan stage of .ci/run runs it)
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

# A daemon that outlives its parent keeps the launcher waiting; signals pass
# on to it, and a second one stops the wait so the report still comes.
set +e
"$CBN" -q --report "$T/r2.txt" -- sh -c \
	"(setsid sh -c 'trap \"\" INT TERM; echo \$\$ >\"$T/dpid\"; sleep 20' &) ; exit 0" \
	>"$T/out.d" 2>"$T/err.d" &
pid=$!
for _ in $(seq 100); do [ -s "$T/dpid" ] && break; sleep 0.05; done
[ -s "$T/dpid" ] || fail "the daemon did not start"
sleep 0.3
kill -INT $pid
sleep 0.3
kill -0 $pid 2>/dev/null || fail "the launcher stopped waiting at the first signal"
kill -INT $pid
wait $pid
rc=$?
set -e
pkill -KILL -P "$(cat "$T/dpid")" 2>/dev/null || true
kill -KILL "$(cat "$T/dpid")" 2>/dev/null || true
[ "$rc" = 0 ] || fail "expected exit status 0 after stopping the wait, got $rc"
grep -q 'stopped waiting' "$T/err.d" || fail "no 'stopped waiting' line"
[ -s "$T/r2.txt" ] || fail "no report after stopping the wait"
exit 0
