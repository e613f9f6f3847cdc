#!/bin/bash
# cli_daemon — processes the program leaves running are its own: a daemon
# that detaches (setsid, parent exited) is not waited for by default (the
# launcher returns when the program does, the report says the daemon was
# still running), it outlives the launcher as it does plainly, and nothing
# of ours signals it.  --wait-all waits for it (its profile is then whole),
# and a signal stops that wait without reaching the daemon.
# ctest-labels: sanitize (the ASan+UBSan stage of .ci/run runs it)
. "$(dirname "$0")/lib/common.bash"
need_cbn

daemon="(setsid sh -c 'sleep 1; echo done >\"$T/flag\"' &) ; exit 0"

start=$(date +%s%N)
run_cbn -q --json "$T/r.json" --report "$T/r.txt" -- sh -c "$daemon"
end=$(date +%s%N)
expect_rc 0
[ ! -f "$T/flag" ] || fail "the launcher waited for the daemon"
[ $(((end - start) / 1000000)) -lt 900 ] || fail "returned after $(((end - start) / 1000000)) ms: it waited for the daemon's 1 s sleep"
grep -q 'still running when the program ended' "$T/r.txt" || fail "the report does not say the daemon was still running"
for _ in $(seq 60); do [ -f "$T/flag" ] && break; sleep 0.05; done
[ -f "$T/flag" ] || fail "the daemon did not outlive the launcher"

rm -f "$T/flag"
start=$(date +%s%N)
run_cbn -q --wait-all --json "$T/r.json" --report "$T/r.txt" -- sh -c "$daemon"
end=$(date +%s%N)
expect_rc 0
[ -f "$T/flag" ] || fail "--wait-all returned before the daemonized grandchild finished"
[ $(((end - start) / 1000000)) -ge 900 ] || fail "--wait-all returned after $(((end - start) / 1000000)) ms, before the grandchild's 1 s sleep"
procs=$(json_get "$T/r.json" run.processes)
[ "$procs" -ge 3 ] || fail "expected the grandchildren's processes in the report, got $procs"
grep -q 'still running when the program ended' "$T/r.txt" && fail "--wait-all: the report says a process was still running"

# --wait-all: a signal stops the wait (the report still comes) and is not
# passed on to the daemon, which runs on.
set +e
"$CBN" -q --wait-all --report "$T/r2.txt" -- sh -c \
	"(setsid sh -c 'echo \$\$ >\"$T/dpid\"; exec sleep 20' &) ; exit 0" \
	>"$T/out.d" 2>"$T/err.d" &
pid=$!
for _ in $(seq 100); do [ -s "$T/dpid" ] && break; sleep 0.05; done
[ -s "$T/dpid" ] || fail "the daemon did not start"
sleep 0.3
kill -0 $pid 2>/dev/null || fail "--wait-all did not wait for the daemon"
kill -INT $pid
wait $pid
rc=$?
set -e
dpid=$(cat "$T/dpid")
alive=0
kill -0 "$dpid" 2>/dev/null && alive=1
kill -KILL "$dpid" 2>/dev/null || true
[ "$rc" = 0 ] || fail "expected exit status 0 after stopping the wait, got $rc"
[ "$alive" = 1 ] || fail "the daemon died with the launcher's wait"
[ -s "$T/r2.txt" ] || fail "no report after stopping the wait"
exit 0
