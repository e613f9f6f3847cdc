#!/bin/bash
# attach_ptrace_scope — the refusal of Yama's ptrace_scope 1 for a user who
# is not root (docs/attach.md): `dump` and `--pid` of one of the user's own
# processes that is not its child exit 125 with the sysctl to change.  The
# setting is the machine's: set to 1 only for the seconds of the test, put
# back by a trap however it ends; `serial` keeps other tests from running
# meanwhile.  Skipped (77) when not root, without setpriv, without Yama in
# the kernel, or when the sysctl cannot be written.
# ctest-labels: serial
. "$(dirname "$0")/lib/common.bash"
need_cbn

SYSCTL=/proc/sys/kernel/yama/ptrace_scope
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups env TMPDIR=/tmp)
[ "$(id -u)" = 0 ] || skip "not root: cannot run a process as nobody nor set $SYSCTL"
command -v setpriv >/dev/null || skip "no setpriv to run cbottleneck as nobody"
"${nobody[@]}" "$CBN" --version >/dev/null 2>&1 || skip "cbottleneck is not runnable as nobody here"
[ -e "$SYSCTL" ] || skip "no Yama in this kernel ($SYSCTL missing): nothing to refuse"
old=$(cat "$SYSCTL")
prog=
trap 'echo "$old" >"$SYSCTL"; [ -z "$prog" ] || kill "$prog" 2>/dev/null; rm -rf "$T"' EXIT
(echo 1 >"$SYSCTL") 2>/dev/null || skip "$SYSCTL cannot be written here"

# nobody's sleep, started by root: not a child of the nobody who reads it.
"${nobody[@]}" sleep 30 &
prog=$!
sleep 0.2
for what in dump --pid; do
	OUTF=$T/out ERRF=$T/err
	RC=0
	if [ "$what" = dump ]; then
		"${nobody[@]}" "$CBN" dump "$prog" >"$OUTF" 2>"$ERRF" || RC=$?
	else
		"${nobody[@]}" "$CBN" --duration 0.5 --pid "$prog" >"$OUTF" 2>"$ERRF" || RC=$?
	fi
	expect_rc 125
	grep -q "Yama's ptrace_scope is 1, so only a parent or root may read process $prog: run as root, or set kernel.yama.ptrace_scope=0 (sysctl)" "$ERRF" ||
		fail "$what: no line naming ptrace_scope and the sysctl"
	[ "$(wc -l <"$ERRF")" = 1 ] || fail "$what: more than one line"
done
echo "$old" >"$SYSCTL"
exit 0
