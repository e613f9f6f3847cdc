#!/bin/bash
# ctl_control — `cbottleneck ctl PID ...` from another process against a
# running examples/ctl_loop with a capture control (--duration: a window open
# from the start): status, stop, mark, start, dump answer as docs/cli.md says
# and leave CAPTURE records of cause ctl in the session file, in order (open
# start, close ctl, mark x, open ctl, mark y, mark dump, close exit); dump
# prints a report of the run so far; the socket is 0600 in a 0700 directory,
# both gone after exit; bad input exits 2, no such or unprofiled process 3.
. "$(dirname "$0")/lib/common.bash"
need_cbn
. "$(dirname "$0")/lib/ctl.bash"

start_loop a --duration 60s
# The launcher serves the socket once it has seen the process start, which
# can be after the program printed its pid.
for i in $(seq 100); do
	[ -S "$T/a/ctl/$PID.sock" ] && break
	sleep 0.05
done
[ -S "$T/a/ctl/$PID.sock" ] || fail "no socket $T/a/ctl/$PID.sock"
[ "$(stat -c %a "$T/a/ctl")" = 700 ] || fail "ctl directory mode $(stat -c %a "$T/a/ctl")"
[ "$(stat -c %a "$T/a/ctl/$PID.sock")" = 600 ] || fail "socket mode not 600"
expect_ctl 0 '^ok recording controlled=1 steps=[0-9]+ windows=1 ' "$PID" status
expect_ctl 0 '^ok paused$' "$PID" stop
expect_ctl 0 '^ok paused$' "$PID" mark x
expect_ctl 0 '^ok recording$' "$PID" start
expect_ctl 0 '^ok recording$' "$PID" mark y
expect_ctl 0 '^ok recording ' "$PID" dump
[[ $CTL_OUT =~ [0-9]+\ samples\ (\([0-9]+\ periods\ of\ CPU\)\ )?in\  ]] || fail "dump printed no report: $CTL_OUT"
[[ $CTL_OUT == *ctl_step* ]] || fail "dump's report does not show ctl_step: $CTL_OUT"
# bad input: usage (2)
expect_ctl 2 "unknown command 'bogus'" "$PID" bogus
expect_ctl 2 'mark needs one NAME' "$PID" mark
expect_ctl 2 "'12x' is not a process id" 12x status
expect_ctl 2 'needs a process id' "$PID"
# no such process, one not profiled (this shell): 3
expect_ctl 3 '^cbottleneck: ctl: no process ' 2147483647 status
expect_ctl 3 'is not profiled by cbottleneck' $$ status
stop_loop a
[ ! -e "$T/a/ctl" ] || fail "the control directory outlived the run: $(ls -la "$T/a/ctl")"
expect_ctl 3 'no process' "$PID" status

got=$(capture_of "$T/a/$PID.0.cbp")
want='open start -;close ctl -;mark ctl x;open ctl -;mark ctl y;mark ctl dump;close exit -;'
[ "$got" = "$want" ] || fail "CAPTURE records: got '$got', expected '$want'"

# Started paused (--capture-range api, the program never calls cbn_start):
# ctl start opens the window, stop closes it.
start_loop p --capture-range api
expect_ctl 0 '^ok paused controlled=1 ' "$PID" status
expect_ctl 0 '^ok recording$' "$PID" start
expect_ctl 0 '^ok paused$' "$PID" stop
stop_loop p
got=$(capture_of "$T/p/$PID.0.cbp")
[ "$got" = 'open ctl -;close ctl -;' ] || fail "paused start: CAPTURE records '$got'"
echo "ok"
