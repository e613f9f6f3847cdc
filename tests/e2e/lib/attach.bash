# attach.bash — helper of the attach tests (tests/e2e/attach_*.sh; source it
# after common.bash).
#
#   attach_to DELAY [CBN OPTIONS...] -- PROGRAM [ARGS...]
# starts PROGRAM in the background (its output into $T/attached.out), waits
# DELAY seconds, runs `cbottleneck OPTIONS --pid` on it through run_cbn ($RC,
# $OUTF, $ERRF), then kills PROGRAM if it still runs.

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
