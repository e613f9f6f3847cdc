#!/bin/bash
# ctl_lifetime — the control socket over a process's life: a fork child of a
# controlled process answers on its own socket (SESSION/ctl/<its pid>.sock),
# for its own session file, and `stop` there leaves the parent recording (the
# CAPTURE records of each file say so); the control thread does not keep
# alive a process whose main thread called pthread_exit and whose other
# threads ended.
. "$(dirname "$0")/lib/common.bash"
need_cbn
. "$(dirname "$0")/lib/ctl.bash"

LOOP_MODE=fork start_loop f --duration 60s
for i in $(seq 100); do
	CHILD=$(sed -n 's/^ctl_loop: child pid //p' "$T/f.out")
	[ -n "$CHILD" ] && break
	sleep 0.05
done
[ -n "$CHILD" ] || fail "fork: no child pid"
expect_ctl 0 "^ok recording controlled=1 .* file=$T/f/$CHILD\.0\.cbp\$" "$CHILD" status
expect_ctl 0 "^ok recording controlled=1 .* file=$T/f/$PID\.0\.cbp\$" "$PID" status
expect_ctl 0 '^ok paused$' "$CHILD" stop
expect_ctl 0 '^ok recording$' "$PID" mark p
stop_loop f
F_PARENT=$T/f/$PID.0.cbp F_CHILD=$T/f/$CHILD.0.cbp

LOOP_MODE=thread start_loop e --capture-range api
expect_ctl 0 '^ok paused controlled=1 ' "$PID" status
stop_loop e

got=$(capture_of "$F_PARENT" "$F_CHILD" | tr '\n' '|')
want='open start -;mark ctl p;close exit -;|open start -;close ctl -;|'
[ "$got" = "$want" ] || fail "CAPTURE records (parent | child): '$got', expected '$want'"
echo "ok"
