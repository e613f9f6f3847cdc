#!/bin/bash
# cpu_report_file — --report FILE writes the text report there; stdout keeps
# only what the target printed.
# ctest-labels: sanitize (the ASan+UBSan stage of .ci/run runs it)
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example split

run_cbn --report "$T/report.txt" -- "$EXAMPLES/split" "$SCALE"
expect_rc 0
[ "$(cat "$OUTF")" = "split: done" ] || fail "stdout holds more than the target's output"
[ -s "$T/report.txt" ] || fail "--report wrote nothing"
grep_out '^   Ordered by: internal time \(tottime\)$' "$T/report.txt"
grep_out 'split\.c:[0-9]+\(heavy\)$' "$T/report.txt"
grep_out '^  Command:    .*split' "$T/report.txt"
exit 0
