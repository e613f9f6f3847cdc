#!/bin/bash
# html_compare — `compare BASE.json NEW.json --html FILE`: the gate's table
# on stdout as without --html and the same text in the page with its exit
# status; in the browser the fragment selects the views it names alone, the
# per-function differential draws bars that grew (red) and shrank (blue)
# (split with heavy:light 1:1, then 5:1: heavy grows, light shrinks), and the
# differential flame graph from the two reports' call_tree colours its frames
# by their change, gives base/new/delta per frame and copes with a path on
# one side only (one added to NEW's tree, one renamed away from it).  A broken
# report is refused before any page is written.
# The same browser launch checks two views of the NEW report the compare
# page also shows (browser start-up is most of a test's time): the waiting
# view on the waiting section of a real off-CPU run (examples/wait_lock
# --off-cpu --html: no second verdict, lock and per-thread tables, colours
# told apart), the compare cards (a sign and a share each), and the distributed
# view on a hand-made "distributed" section in the shape docs/distributed.md
# gives (a row and a split bar per rank, the straggler sentence, sites and
# collectives).  One browser launch.
. "$(dirname "$0")/lib/common.bash"
. "$CBN_SOURCE_DIR/tests/html/browser.bash"
need_cbn
need_example split
need_example wait_lock

run_cbn --json "$T/base.json" -- "$EXAMPLES/split" 0.3 1
expect_rc 0
run_cbn --json "$T/new.json" -- "$EXAMPLES/split" 0.3 5
expect_rc 0
# a real off-CPU run's page: its data holds the waiting section the browser
# checks below, in the compare page
# (the lock is missed now and then, as in e2e.wait_lock: once more then)
for attempt in 1 2; do
	run_cbn --off-cpu --json "$T/w.json" --html "$T/w.html" -- "$EXAMPLES/wait_lock" 20
	expect_rc 0
	[ "$(html_data "$T/w.html" 'len(d["report"]["waiting"]["locks"])')" -ge 1 ] && break
	[ $attempt = 2 ] && fail "wait_lock --off-cpu --html: no lock in the page's waiting section (2 tries)"
	note "wait_lock --off-cpu --html: no lock in the first try; once more"
done
# The distributed section of a 4-rank job whose rank 2 straggles, through
# the whole pipeline (loader, analysis, JSON) from synthetic rank sessions
# (bench/gen_session.c, as e2e.dist_report).
gen="$T/gen_session"
cc -std=c11 -D_GNU_SOURCE -O1 -g -I"$CBN_SOURCE_DIR/src/format" \
	"$CBN_SOURCE_DIR/bench/gen_session.c" -o "$gen" || fail "cannot build bench/gen_session.c"
"$gen" "$T/dist" 200 8 4 2 >/dev/null || fail "gen_session failed"
"$CBN" report --json "$T/dist.json" "$T/dist" >/dev/null 2>&1 || fail "report of the rank sessions failed"
# NEW: the split run, with the waiting section of the wait_lock run, that
# distributed section, and its call tree given a path BASE lacks and losing
# one BASE has
/usr/bin/python3 - "$T/new.json" "$T/w.json" "$T/dist.json" "$T/base.json" <<'PY' || fail "cannot edit new.json"
import json, sys
d = json.load(open(sys.argv[1]))
d["waiting"] = json.load(open(sys.argv[2]))["waiting"]
ct = d["call_tree"]["nodes"]
assert ct and ct[0]["parent"] == -1, ct[:1]
add = 10000000
ct[0]["total_ns"] += add
ct.append({"parent": 0, "function": "only_in_new", "file": "", "line": 0, "self_ns": add,
	   "total_ns": add, "inlined": False})
# a path BASE has too: one NEW samples alone would leave BASE nothing to lose
def paths(nodes):
	out = []
	for n in nodes:
		up = out[n["parent"]] if n["parent"] >= 0 else ()
		out.append(up + ((n["function"], n["file"]),))
	return out
base = set(paths(json.load(open(sys.argv[4]))["call_tree"]["nodes"]))
mine = paths(ct)
gone = next(i for i in range(len(ct) - 1, 0, -1)
	    if ct[i]["function"] != "only_in_new" and mine[i] in base)
ct[gone]["function"] = "renamed_in_new"
d["distributed"] = json.load(open(sys.argv[3]))["distributed"]
json.dump(d, open(sys.argv[1], "w"))
PY
st_plain=0
"$CBN" compare "$T/base.json" "$T/new.json" >"$T/plain.out" 2>/dev/null || st_plain=$?
st=0
"$CBN" compare "$T/base.json" "$T/new.json" --html "$T/cmp.html" >"$T/html.out" 2>"$T/err" || st=$?
[ $st = $st_plain ] || fail "compare exits $st with --html, $st_plain without"
# the tables agree but for the measured figures' noise: same rows
diff <(cut -c1-40 "$T/plain.out") <(cut -c1-40 "$T/html.out") >/dev/null ||
	fail "compare --html printed another table than compare"
[ -s "$T/cmp.html" ] || fail "compare --html wrote no page: $(cat "$T/err")"
[ "$(html_data "$T/cmp.html" 'd["gate"]["status"]')" = $st ] || fail "the page's gate status is not $st"
html_data "$T/cmp.html" 'd["gate"]["table"]' | grep 'func\[' >/dev/null || fail "the page lacks the gate's table"

echo '{"broken' >"$T/bad.json"
st=0
"$CBN" compare "$T/base.json" "$T/bad.json" --html "$T/bad.html" >/dev/null 2>&1 || st=$?
[ $st = 2 ] || fail "a broken report is not a usage error (2)"
[ -e "$T/bad.html" ] && fail "a page was written for a broken report"

html_open "$T/cmp.html" '#compare,waiting,distributed&selftest=all' html_compare 4000
html_expect '^render compare ok' '^render waiting ok' '^render distributed ok' \
	'^selftest compare\.bars ok grew=[1-9][0-9]* shrank=[1-9]' \
	'^selftest compare\.flame ok frames=[1-9][0-9]* grew=[1-9][0-9]* shrank=[1-9][0-9]* only_new=[1-9][0-9]* only_base=[1-9]' \
	'^selftest compare\.cards ok cards=[+−±][^|]*%\)\|[+−±]' \
	'^selftest waiting\.tables ok category=[a-z-]+ per_thread=[1-9][0-9]* locks=[1-9]' \
	'^selftest distributed\.ranks ok ranks=4 segments=[1-9][0-9]* sites=[1-9][0-9]* collectives=[1-9][0-9]* straggler=2'
grep -q 'data-view="compare,waiting,distributed"' "$DOM" || fail "the fragment did not select the views it names"
grep -q 'id="view-cpu"' "$DOM" && fail "#compare,... rendered a view it does not name"
exit 0
