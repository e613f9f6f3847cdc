#!/bin/bash
# ctl_default — when a process has a control socket (docs/steps.md): not in a
# run without capture controls (no ctl directory, no extra thread, no socket
# descriptor; `ctl` exits 3 saying so); with CBN_CTL=1 and no control, mark
# and status work and stop is refused (exit 1); CBN_CTL=0 wins over a control.
. "$(dirname "$0")/lib/common.bash"
need_cbn
. "$(dirname "$0")/lib/ctl.bash"

start_loop b
[ ! -e "$T/b/ctl" ] || fail "a run without controls made $T/b/ctl"
n=$(ls "/proc/$PID/task" | wc -l)
[ "$n" = 1 ] || fail "a run without controls has $n threads, expected 1"
if ls -l "/proc/$PID/fd" 2>/dev/null | grep -q 'socket:'; then
	fail "a run without controls has a socket open"
fi
expect_ctl 3 'has no control socket' "$PID" status
stop_loop b

export CBN_CTL=1
start_loop c
expect_ctl 0 '^ok recording controlled=0 ' "$PID" status
expect_ctl 1 'not under control in this run' "$PID" stop
expect_ctl 0 '^ok recording$' "$PID" mark z
stop_loop c
C_FILE=$T/c/$PID.0.cbp

export CBN_CTL=0
start_loop d --duration 60s
[ ! -e "$T/d/ctl" ] || fail "CBN_CTL=0 made $T/d/ctl"
expect_ctl 3 'has no control socket' "$PID" status
stop_loop d
unset CBN_CTL

got=$(capture_of "$C_FILE")
[ "$got" = 'mark ctl z;' ] || fail "CBN_CTL=1: CAPTURE records '$got', expected 'mark ctl z;'"
echo "ok"
