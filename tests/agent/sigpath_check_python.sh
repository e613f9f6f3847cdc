#!/bin/bash
# sigpath_check_python — Python frames read in the sampling handler take no
# lock and call no allocator: Debian's python3 (3.11, which tools/deps.sh
# installs) runs threads, generators and ctypes callbacks under cbottleneck at
# 4 kHz with the signal-path check copy of the agent (tests/agent/sigcheck.c),
# which aborts the program when malloc, calloc, realloc, free or
# pthread_mutex_lock runs inside the handler.  Each must exit normally with
# Python frames in its samples.
. "$(dirname "$0")/../e2e/lib/common.bash"
. "$(dirname "$0")/../e2e/lib/python.bash"
need_cbn
CHECK_DIR=$CBN_BUILD_DIR/tests/agent/sigcheck
[ -f "$CHECK_DIR/libcbottleneck.so" ] || skip "check agent not built: $CHECK_DIR (CBN_SIGPATH_CHECK=OFF?)"
[ -f "$CHECK_DIR/libcbn_unwd.so" ] || skip "private libunwind missing in $CHECK_DIR"
py_need 3.11

export CBN_AGENT_DIR=$CHECK_DIR
# The check copy must be the agent the interpreter loaded (first in
# LD_PRELOAD, its malloc is the program's), else nothing is checked.
cat >"$T/which.py" <<'PY'
import sys
print("agent loaded" if sys.argv[1] + "/libcbottleneck.so" in open("/proc/self/maps").read() else "no")
PY
run_cbn -F 4000 -- "$PY" "$T/which.py" "$CHECK_DIR"
grep -q "sigpath check" "$ERRF" && fail "the check fired: $(grep 'sigpath check' "$ERRF")"
grep -qx "agent loaded" "$OUTF" || fail "the check agent is not loaded in the interpreter"
for s in threads generators cext; do
	run_cbn -F 4000 --json "$T/$s.json" -- "$PY" "$WORKLOADS" "$s" "$SCALE"
	grep -q "sigpath check" "$ERRF" && fail "$s: the check fired: $(grep 'sigpath check' "$ERRF")"
	expect_rc 0
	grep -q "^$s: done$" "$OUTF" || fail "$s: the program did not finish"
	n=$(json_get "$T/$s.json" run.python.samples)
	note "$s: $n of $(json_get "$T/$s.json" run.samples) samples with Python frames"
	[ "$n" -ge 100 ] || fail "$s: only $n samples with Python frames at 4 kHz"
done
exit 0
