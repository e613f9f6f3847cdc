#!/bin/bash
# cpu_limit — --limit N shows N rows of the CPU table and says how many more.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example split

run_cbn --limit 3 -- "$EXAMPLES/split" "$SCALE"
expect_rc 0
n=$(cpu_rows | wc -l)
[ "$n" -eq 3 ] || fail "--limit 3 shows $n rows"
grep_out '^   \([0-9]+ more functions?: [0-9.]+% of the self time; use --limit\)$'
# the JSON is never limited
run_cbn --limit 1 --json "$T/r.json" -- "$EXAMPLES/split" "$SCALE"
expect_rc 0
[ "$(cpu_rows | wc -l)" -eq 1 ] || fail "--limit 1 shows $(cpu_rows | wc -l) rows"
nf=$(json_py "$T/r.json" 'len(d["functions"])')
[ "$nf" -ge 3 ] || fail "JSON lists $nf functions with --limit 1, expected all (>= 3)"
exit 0
