#!/bin/bash
# cli_signals — SIGTERM/SIGINT/SIGHUP sent to the launcher reach the target
# (which may handle them), the launcher itself survives to write the report,
# and the exit status is the target's.
# ctest-labels: sanitize (the ASan+UBSan stage of .ci/run runs it)
. "$(dirname "$0")/lib/common.bash"
need_cbn
# The system python starts faster than a version-manager shim (a script).
PY=$(command -v /usr/bin/python3 || command -v python3) || skip "python3 not installed"

for sig in TERM INT HUP; do
	rm -f "$T/ready"
	# python3, not sh: a shell cannot trap a signal that was ignored when it
	# started, and a background job of this script starts with SIGINT ignored.
	cat >"$T/trap.py" <<EOS
import os, signal, sys, time
def handler(signo, frame):
    print("got $sig", flush=True)
    sys.exit(3)
signal.signal(signal.SIG$sig, handler)
open("$T/ready", "w").close()
time.sleep(10)
print("no signal")
EOS
	set +e
	"$CBN" -q --report "$T/report.$sig" -- "$PY" "$T/trap.py" >"$T/out.$sig" 2>"$T/err.$sig" &
	pid=$!
	for _ in $(seq 100); do [ -e "$T/ready" ] && break; sleep 0.05; done
	[ -e "$T/ready" ] || fail "the target did not start"
	kill -$sig $pid
	wait $pid
	rc=$?
	set -e
	OUTF="$T/out.$sig" ERRF="$T/err.$sig"
	[ "$rc" = 3 ] || fail "SIG$sig: expected the target's exit status 3, got $rc"
	grep -qx "got $sig" "$T/out.$sig" || fail "SIG$sig was not forwarded to the target"
	grep -q 'CPU profile' "$T/report.$sig" || fail "no report after SIG$sig"
done

# A target that does not handle SIGTERM dies of it: 143 and the line.
set +e
"$CBN" --report "$T/report.die" -- sh -c "touch $T/ready2; exec sleep 10" >"$T/out.die" 2>"$T/err.die" &
pid=$!
for _ in $(seq 100); do [ -e "$T/ready2" ] && break; sleep 0.05; done
sleep 0.1
kill -TERM $pid
wait $pid
rc=$?
set -e
OUTF="$T/out.die" ERRF="$T/err.die"
# exec: a sleep left behind by a killed shell would be waited for (subreaper).
[ "$rc" = 143 ] || fail "expected 143 for an unhandled SIGTERM, got $rc"
grep -q 'killed by signal 15' "$T/err.die" || fail "no 'killed by signal 15' line"
exit 0
