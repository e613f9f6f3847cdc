#!/bin/bash
# cpu_sort — every pstats --sort key orders the cProfile table by that key,
# and the order actually changes between keys (one run, re-reported per key).
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example split

# check_order KEY COLUMN-KIND: the table of the last run is ordered by it.
check_order()
{
	cpu_rows >"$T/rows"
	[ "$(wc -l <"$T/rows")" -ge 3 ] || fail "--sort $1: fewer than 3 rows"
	python3 - "$T/rows" "$2" <<'PY' || fail "--sort $1: rows are not ordered by $2"
import re, sys
rows = [l.rstrip("\n") for l in open(sys.argv[1])]
kind = sys.argv[2]
def parse(l):
    f = l.split(None, 5)
    m = re.match(r"^(.*):(\d+)\((.*)\)$", f[5])
    return dict(ncalls=int(f[0]), tottime=float(f[1]), cumtime=float(f[3]),
                file=m.group(1), line=int(m.group(2)), name=m.group(3))
r = [parse(l) for l in rows]
if kind in ("tottime", "cumtime", "ncalls"):
    v = [x[kind] for x in r]
    ok = all(a >= b for a, b in zip(v, v[1:]))
elif kind == "name":
    v = [x["name"].encode() for x in r]
    ok = all(a <= b for a, b in zip(v, v[1:]))
elif kind == "line":
    v = [x["line"] for x in r]
    ok = all(a <= b for a, b in zip(v, v[1:]))
elif kind == "file":
    # functions without a file ("~", "[module]") first, then paths in order
    nofile = [x["file"].startswith(("~", "[")) for x in r]
    ok = nofile == sorted(nofile, reverse=True)
    v = [x["file"].encode() for x in r if x["file"].startswith("/")]
    ok = ok and all(a <= b for a, b in zip(v, v[1:]))
if not ok:
    print("# %s order broken: %s" % (kind, v), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}

# one run, kept with -o; every key is then a cheap `report` of that session
run_cbn -o "$T/sess" --limit 40 -- "$EXAMPLES/split" "$SCALE"
expect_rc 0
check_order default tottime
first_tot=$(cpu_row_field 1 6)
grep_out '^   Ordered by: internal time \(tottime\)$'

for spec in tottime:tottime time:tottime cumulative:cumtime cumtime:cumtime \
	    calls:ncalls ncalls:ncalls name:name nfl:name filename:file line:line; do
	key=${spec%%:*}
	kind=${spec#*:}
	run_cbn report --limit 40 --sort "$key" "$T/sess"
	expect_rc 0
	check_order "$key" "$kind"
	case $key in
	cumulative | cumtime) grep_out '^   Ordered by: cumulative time \(cumtime\)$' ;;
	name)
		grep_out '^   Ordered by: function name$'
		[ "$(cpu_row_field 1 6)" != "$first_tot" ] ||
			fail "--sort name kept the tottime order (first row $first_tot)"
		;;
	esac
done

# main is above heavy by cumtime, below it by tottime
run_cbn report --limit 40 --sort cumulative "$T/sess"
m=$(cpu_rows | grep -n '(main)$' | head -n1 | cut -d: -f1)
h=$(cpu_rows | grep -n '(heavy)$' | head -n1 | cut -d: -f1)
[ -n "$m" ] && [ -n "$h" ] && [ "$m" -lt "$h" ] || fail "by cumtime main ($m) is not above heavy ($h)"
run_cbn report --limit 40 --sort tottime "$T/sess"
m=$(cpu_rows | grep -n '(main)$' | head -n1 | cut -d: -f1)
h=$(cpu_rows | grep -n '(heavy)$' | head -n1 | cut -d: -f1)
[ -n "$m" ] && [ -n "$h" ] && [ "$m" -gt "$h" ] || fail "by tottime main ($m) is not below heavy ($h)"

# a key that is not a sort key is a usage error
run_cbn --sort bogus -- "$EXAMPLES/split" 0.01
expect_rc 2
exit 0
