#!/bin/bash
# html_views — the --html page of a CPU run, opened in headless chromium: one
# self-contained file (no URL outside it, data and scripts gzip+base64 above
# 16 KiB of data, plain JSON with no raw '<' below), the same page from
# `report DIR --html`, and in the browser every view with data renders
# without an error, the function table sorts by a clicked column and
# filters with inline marks, a click on a flame graph frame zooms it to the
# full width and a search finds it, its three views draw, and the timeline
# draws one lane per sampled thread (examples/threads: 5) and zooms and pans
# with the keys, the source view shows threads.c with heat on its hot lines
# and an editor link, the overview draws the CPUs in use (in CPUs, not one
# bin of wall time); --source-root finds a moved source.
# One browser launch; the screenshot of every view is kept in the build
# directory.
. "$(dirname "$0")/lib/common.bash"
. "$CBN_SOURCE_DIR/tests/html/browser.bash"
need_cbn
need_example threads

run_cbn -o "$T/s" --html "$T/run.html" --json "$T/r.json" -- "$EXAMPLES/threads" "$SCALE"
expect_rc 0
[ -s "$T/run.html" ] || fail "--html wrote no file"
grep -q 'data-encoding="gzip+base64"' "$T/run.html" || fail "a $(wc -c <"$T/run.html")-byte page's data is not compressed"

# report DIR --html: the same page from the kept session; plain JSON forced
"$CBN" report -q --html "$T/rep.html" "$T/s" >/dev/null 2>"$T/rep.err" || fail "report --html: $(cat "$T/rep.err")"
CBN_HTML_GZIP=0 "$CBN" report -q --html "$T/plain.html" "$T/s" >/dev/null 2>&1 || fail "report --html (plain)"
grep -q 'id="cbn-code"' "$T/run.html" || fail "the compressed page's scripts are not compressed"
# offline: nothing is fetched (no external script, style, image or link);
# read on the plain page, whose scripts are not compressed
grep -q 'id="cbn-code"' "$T/plain.html" && fail "CBN_HTML_GZIP=0 compressed the scripts"
grep -Eiq '(src|href)="(https?:)?//|<link |@import|url\(http' "$T/plain.html" &&
	fail "the page refers to something outside itself"
/usr/bin/python3 - "$T/plain.html" <<'PY' || fail "the plain page's data element is not clean JSON"
import json, re, sys
t = open(sys.argv[1]).read()
m = re.search(r'<script id="cbn-data" type="application/json" data-encoding="json">(.*?)</script>', t, re.S)
assert m, "no plain data element"
assert "<" not in m.group(1), "a raw '<' in the data"
d = json.loads(m.group(1))
assert d["kind"] == "run" and d["report"]["functions"], d.keys()
tl = d["html"]["timeline"]["lanes"]
# one lane per thread with samples (5 here; on a loaded CI machine a worker
# of 27 ms once had none, as the report's own thread table said)
sampled = [t for t in d["report"]["threads"] if t.get("samples", 0) > 0]
assert len(tl) == len(sampled) >= 4, ([l["name"] for l in tl], len(sampled))
print(len(tl), file=open(sys.argv[1] + ".lanes", "w"))
assert d["html"]["tree"]["nodes"][0] == -1
PY

# --source-root: a source found under DIR by a tail of its recorded path
mkdir -p "$T/moved/examples"
cp "$CBN_SOURCE_DIR/examples/threads.c" "$T/moved/examples/"
"$CBN" report -q --html "$T/moved.html" --source-root "$T/moved" "$T/s" >/dev/null 2>&1 ||
	fail "report --html --source-root"
got=$(html_data "$T/moved.html" '[s.get("path", "") for s in d["html"]["sources"] if s["file"].endswith("/threads.c")][0]')
[ "$got" = "$T/moved/examples/threads.c" ] || fail "--source-root: threads.c read from '$got'"

html_open "$T/run.html" '#all&selftest=all' html_views 5000 shot
html_expect '^render overview ok' '^render cpu ok' '^render source ok' '^render timeline ok' \
	'^selftest cpu\.sort ok' '^selftest cpu\.filter ok .*marks=[1-9]' \
	'^selftest cpu\.zoom ok frame=worker_spin' \
	'^selftest cpu\.views ok left_rows=[0-9]+ time_boxes=[1-9][0-9]* .*sandwich=' \
	"^selftest timeline\\.lanes ok lanes=$(cat "$T/plain.html.lanes") " \
	'^selftest source\.heat ok .*file=threads\.c' \
	'^selftest overview\.cores ok bars=[1-9][0-9]* series=threads most=[0-9.]+ cpus=[1-9]'
exit 0
