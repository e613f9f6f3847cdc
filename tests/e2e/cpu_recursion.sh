#!/bin/bash
# cpu_recursion — recurse() is ~200 frames deep on every stack: its cumtime is
# counted once per sample, so it lies between 80 % and 100 % of the run.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example recursion

run_cbn --json "$T/r.json" --sort cumulative -- "$EXAMPLES/recursion" "$SCALE"
expect_rc 0
tot=$(json_func_field "$T/r.json" recurse total_ns)
self=$(json_func_field "$T/r.json" recurse self_ns)
cpu=$(json_get "$T/r.json" run.cpu_ns)
share=$(python3 -c "print($tot / $cpu if $cpu else 0)")
note "recurse total_ns=$tot self_ns=$self run.cpu_ns=$cpu share=$share"
python3 -c "import sys; sys.exit(0 if 0.8 <= $share <= 1.0 else 1)" ||
	fail "recurse cumtime is $share of the run, expected 0.8..1.0"
python3 -c "import sys; sys.exit(0 if $self <= $tot else 1)" || fail "self > total for recurse"
# in the table too: cumtime of recurse ≤ the run's CPU seconds
line=$(def_line "$CBN_SOURCE_DIR/examples/recursion.c" recurse)
row=$(cpu_rows | grep "recursion\.c:$line(recurse)$" | head -n1)
[ -n "$row" ] || fail "no row for recursion.c:$line(recurse)"
cum=$(echo "$row" | awk '{ print $4 }')
python3 -c "import sys; sys.exit(0 if $cum <= $cpu / 1e9 + 0.0005 else 1)" ||
	fail "cumtime $cum s of recurse exceeds the run's CPU $cpu ns"
grep_out '^   Ordered by: cumulative time \(cumtime\)$'
exit 0
