#!/bin/bash
# sigpath_check — the busy multi-threaded program (malloc, realloc, free and a
# shared mutex in tight loops, short-lived threads) runs under cbottleneck at
# 4 kHz with the signal-path check copy of the agent, which aborts the program
# when malloc, calloc, realloc, free or pthread_mutex_lock runs inside the
# sampling handler (tests/agent/sigcheck.c).  It must exit normally, with
# samples, some of them inside the allocation loop.
. "$(dirname "$0")/../e2e/lib/common.bash"
need_cbn
CHECK_DIR=$CBN_BUILD_DIR/tests/agent/sigcheck
BUSY=$CBN_BUILD_DIR/tests/agent/progs/sigcheck_busy
[ -f "$CHECK_DIR/libcbottleneck.so" ] || skip "check agent not built: $CHECK_DIR (CBN_SIGPATH_CHECK=OFF?)"
[ -f "$CHECK_DIR/libcbn_unwd.so" ] || skip "private libunwind missing in $CHECK_DIR"
[ -x "$BUSY" ] || skip "program not built: $BUSY"

export CBN_AGENT_DIR=$CHECK_DIR
run_cbn -F 4000 --json "$T/r.json" -- "$BUSY" 1.5
grep -q "sigpath check" "$ERRF" && fail "the check fired: $(grep 'sigpath check' "$ERRF")"
expect_rc 0
grep -qx ok "$OUTF" || fail "the program did not finish (no 'ok' on stdout)"
# The program's malloc must be the check copy's, else nothing was checked.
grep -q "^malloc from $CHECK_DIR/libcbottleneck.so\$" "$ERRF" ||
	fail "malloc is not the check agent's: $(grep '^malloc from' "$ERRF")"

samples=$(json_get "$T/r.json" run.samples)
note "$samples samples"
[ "$samples" -ge 100 ] || fail "only $samples samples at 4 kHz"
alloc=$(json_func_field "$T/r.json" busy_alloc total_ns)
[ "$alloc" -gt 0 ] ||
	fail "no samples in busy_alloc (total $alloc)"
exit 0
