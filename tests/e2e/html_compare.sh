#!/bin/bash
# html_compare — `compare BASE.json NEW.json --html FILE`: the gate's table
# on stdout as without --html and the same text in the page with its exit
# status; in the browser the fragment #compare opens that view alone, the
# per-function differential draws bars that grew (red) and shrank (blue)
# (split with heavy:light 1:1, then 5:1: heavy grows, light shrinks).  A broken
# report is refused before any page is written.  One browser launch.
. "$(dirname "$0")/lib/common.bash"
. "$CBN_SOURCE_DIR/tests/html/browser.bash"
need_cbn
need_example split

run_cbn --json "$T/base.json" -- "$EXAMPLES/split" 0.3 1
expect_rc 0
run_cbn --json "$T/new.json" -- "$EXAMPLES/split" 0.3 5
expect_rc 0
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

html_open "$T/cmp.html" '#compare&selftest=bars' html_compare 2000
html_expect '^render compare ok' '^selftest compare\.bars ok grew=[1-9][0-9]* shrank=[1-9]'
grep -q 'data-view="compare"' "$DOM" || fail "the fragment did not select the compare view"
grep -q 'id="view-cpu"' "$DOM" && fail "#compare rendered other views too"
exit 0
