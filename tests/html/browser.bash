# browser.bash — open an --html page in headless chromium for the e2e tests
# (source it after lib/common.bash).  One launch does everything a test needs
# from the page: the DOM after the scripts ran (the page writes its render
# and self-test results into #cbn-status) and a screenshot for review, kept
# under the build directory: $CBN_BUILD_DIR/html-screenshots/NAME.png.
#
#   html_open PAGE '#all&selftest=all' NAME [HEIGHT] [shot]   # sets $DOM, $CLOG, $STATUS
#
# A screenshot costs about 1 s per 1 000 px of window height (3 s of a 7 s
# launch at 5 000 px), so it is taken where the test asks for it ("shot":
# e2e.html_views, every CPU view) unless CBN_HTML_SCREENSHOTS says otherwise:
# "all" for every test's page, "0" for none.
#   html_expect 'selftest cpu.sort ok' ...              # lines #cbn-status must hold
#
# A browser that is missing or cannot start skips the test (exit 77); a page
# that does not finish rendering fails it.

# CBN_BROWSER names the browser (a path or a command); unset: the first of
# chromium, chromium-browser, google-chrome on PATH.
html_find_browser()
{
	local b
	if [ -n "${CBN_BROWSER:-}" ]; then
		command -v "$CBN_BROWSER" >/dev/null 2>&1 && { echo "$CBN_BROWSER"; return 0; }
		return 1
	fi
	for b in chromium chromium-browser google-chrome; do
		command -v "$b" >/dev/null 2>&1 && { echo "$b"; return 0; }
	done
	return 1
}

html_open()
{
	local page=$1 frag=$2 name=$3 height=${4:-3000} b rc shot=()
	b=$(html_find_browser) || skip "no chromium on PATH (tools/deps.sh --test installs it)"
	SHOTS="${CBN_BUILD_DIR:-$T}/html-screenshots"
	mkdir -p "$SHOTS"
	DOM="$T/$name.dom.html"
	CLOG="$T/$name.console.log"
	# --virtual-time-budget: the page decodes its data asynchronously
	# (DecompressionStream); chromium then waits until the tasks settle
	# instead of dumping the DOM at the load event.
	case ${CBN_HTML_SCREENSHOTS:-} in
	0) ;;
	all) shot=(--screenshot="$SHOTS/$name.png");;
	*) [ "${5:-}" = shot ] && shot=(--screenshot="$SHOTS/$name.png");;
	esac
	rc=0
	timeout 60 "$b" --headless=new --disable-gpu --no-sandbox --no-first-run \
		--disable-extensions --disable-background-networking --disable-sync \
		--disable-dev-shm-usage --user-data-dir="$T/chromium-profile" \
		--enable-logging=stderr --v=0 --virtual-time-budget=1000 \
		--window-size=1400,"$height" "${shot[@]}" \
		--dump-dom "file://$page$frag" >"$DOM" 2>"$CLOG" || rc=$?
	if ! grep -q 'id="cbn-status"' "$DOM"; then
		tail -n 5 "$CLOG" >&2
		[ $rc -ne 0 ] && skip "chromium could not start or load the page (exit $rc)"
		fail "chromium loaded $page$frag but the page has no status element"
	fi
	STATUS="$T/$name.status"
	/usr/bin/python3 - "$DOM" >"$STATUS" <<'PY'
import html, re, sys
m = re.search(r'<div id="cbn-status"[^>]*>(.*?)</div>', open(sys.argv[1], errors="replace").read(), re.S)
print(html.unescape(m.group(1)) if m else "")
PY
	[ ${#shot[@]} = 0 ] || note "screenshot: $SHOTS/$name.png"
}

# html_expect REGEX...: each matches a line of #cbn-status; no line of it is
# an error or a failed self-test, and the browser's log has no uncaught error.
html_expect()
{
	/usr/bin/python3 - "$DOM" "$CLOG" "$@" <<'PY' || fail "the page did not render as expected"
import html, re, sys
dom = open(sys.argv[1], encoding="utf-8", errors="replace").read()
log = open(sys.argv[2], encoding="utf-8", errors="replace").read()
m = re.search(r'<div id="cbn-status"([^>]*)>(.*?)</div>', dom, re.S)
assert m, "no #cbn-status in the DOM"
attrs, text = m.group(1), html.unescape(m.group(2))
lines = text.splitlines()
for l in lines:
    print("page:", l, file=sys.stderr)
bad = [l for l in lines if l.startswith("error") or " FAIL " in l]
assert not bad, "errors in the page: %s" % bad
assert 'data-state="ready"' in attrs, "the page never became ready: %s" % attrs
assert 'data-errors="0"' in attrs, attrs
unc = [l for l in log.splitlines() if "CONSOLE" in l and "Uncaught" in l]
assert not unc, "uncaught errors in the browser's log: %s" % unc
for want in sys.argv[3:]:
    assert any(re.search(want, l) for l in lines), "no line matches %r" % want
PY
}

# html_status_value KEY: the number after KEY= in the page's status (first).
html_status_value()
{
	grep -o "$1=[0-9]*" "$STATUS" | head -1 | cut -d= -f2
}

# html_data PAGE PYEXPR: evaluate PYEXPR on the page's data (d), gzip or not.
html_data()
{
	/usr/bin/python3 - "$1" "$2" <<'PY'
import base64, gzip, json, re, sys
t = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<script id="cbn-data" [^>]*data-encoding="([^"]+)">(.*?)</script>', t, re.S)
raw = m.group(2)
d = json.loads(gzip.decompress(base64.b64decode(raw)) if m.group(1) == "gzip+base64" else raw)
print(eval(sys.argv[2]))
PY
}
