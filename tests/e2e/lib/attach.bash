# attach.bash — helper of the attach tests (tests/e2e/attach_*.sh; source it
# after common.bash).
#
#   attach_to DELAY [CBN OPTIONS...] -- PROGRAM [ARGS...]
# starts PROGRAM in the background (its output into $T/attached.out), waits
# DELAY seconds, runs `cbottleneck OPTIONS --pid` on it through run_cbn ($RC,
# $OUTF, $ERRF), then kills PROGRAM if it still runs.
#
#   zombie_start
# leaves $zombie, a process that has exited and is not reaped: the child of
# a python ($parent, to kill) that sleeps 30 s without waiting for it.

attach_to()
{
	local delay=$1 prog
	local -a opts=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	"$@" >"$T/attached.out" 2>&1 &
	prog=$!
	sleep "$delay"
	run_cbn "${opts[@]}" --pid "$prog"
	kill "$prog" 2>/dev/null || true
	wait "$prog" 2>/dev/null || true
}

zombie_start()
{
	python3 -c 'import os, sys, time
pid = os.fork()
if pid == 0:
    os._exit(0)
print(pid, flush=True)
time.sleep(30)' >"$T/zombie.pid" &
	parent=$!
	for _ in $(seq 100); do [ -s "$T/zombie.pid" ] && break; sleep 0.1; done
	zombie=$(cat "$T/zombie.pid")
	sleep 0.1
}
