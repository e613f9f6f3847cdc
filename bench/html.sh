#!/usr/bin/env bash
# html.sh — the --html page's size and time to render for synthetic runs of
# 10 k, 100 k and 1 M samples (bench/gen_session.c: 30 frames each over 256
# real functions, 4 threads).  For each: the time `cbottleneck report DIR
# --html` takes (analysis and page together) and the page's size, then the
# wall time of headless `chromium --dump-dom` on the page (#overview, then
# #all: every view), and the same minus a blank page's (the browser's own
# start), which is the page's cost: reading, inflating and parsing its data
# and drawing the view.  The page's own clocks are not used: under
# --virtual-time-budget, which --dump-dom needs to wait for the inflating,
# performance.now() runs on virtual time.  Also the timeline rectangles one
# frame draws (its self-test).
# Then the timeline's frame rate on FPS_SLICES synthetic slices (100 000: 20
# lanes): the page (#timeline&selftest=fps) pans and zooms by program every
# requestAnimationFrame for 3 s on real time, driven over chromium's
# --remote-debugging-pipe (no virtual time), and prints the frames per second
# and their ratio to the 60 fps target, the mean and p95 time of its own
# drawing, and the same for a 20-slice timeline (the machine's ceiling);
# then again with chromium's frame-rate limit off, where frames/s is the
# inverse of a whole frame's cost, at 1 and 2 device pixels per CSS pixel.
# docs/html.md gives the figures.  Not part of ctest.
# Usage: bench/html.sh [BUILD_DIR]   Env: SIZES ("10000 100000 1000000"),
# FPS_SLICES (100000), FPS_ONLY=1 (the frame rate alone).
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
CBN="$BUILD/cbottleneck"
SIZES=${SIZES:-"10000 100000 1000000"}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cbn-html-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

die() { echo "html.sh: $*" >&2; exit 1; }
now_ns() { date +%s%N; }
[ -x "$CBN" ] || die "no launcher at $CBN: build first"
B=$(command -v chromium || command -v chromium-browser || command -v google-chrome) ||
	die "no chromium on PATH (tools/deps.sh --test installs it)"
gen="$TMP/gen_session"
cc -std=c11 -D_GNU_SOURCE -O2 -g -I"$SRC/src/format" "$SRC/bench/gen_session.c" -o "$gen" ||
	die "cannot build bench/gen_session.c"

render()   # PAGE FRAGMENT: prints the wall ms of the best of 3
{
	local t0 t1 ms best=""
	for _ in 1 2 3; do
		t0=$(now_ns)
		timeout 120 "$B" --headless=new --disable-gpu --no-sandbox --no-first-run \
			--disable-extensions --user-data-dir="$TMP/profile" --virtual-time-budget=1000 \
			--dump-dom "file://$1$2" >"$TMP/dom.html" 2>/dev/null || true
		t1=$(now_ns)
		ms=$(( (t1 - t0) / 1000000 ))
		if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
	done
	case $1 in *.html) grep -q 'data-errors="0"' "$TMP/dom.html" ||
		echo "warning: $1$2 did not render cleanly" >&2;; esac
	echo "$best"
}

# CDP over --remote-debugging-pipe (fd 3: commands in, fd 4: replies out,
# NUL-separated JSON): poll the page's status until WANT shows up
cat >"$TMP/cdp.py" <<'PY'
import json, os, subprocess, sys, time
browser, url, want, limit, profile = sys.argv[1:6]
r_cmd, w_cmd = os.pipe()
r_ev, w_ev = os.pipe()
def child():
	os.dup2(r_cmd, 3); os.dup2(w_ev, 4)
	os.set_inheritable(3, True); os.set_inheritable(4, True)
p = subprocess.Popen([browser, "--headless=new", "--no-sandbox", "--no-first-run",
	"--disable-extensions", "--user-data-dir=" + profile, "--window-size=1400,900",
	"--remote-debugging-pipe"] + os.environ.get("CBN_CHROMIUM_FLAGS", "").split() + [url],
	close_fds=False, preexec_fn=child,
	stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
os.close(r_cmd); os.close(w_ev)
buf, nid = b"", 0
def call(method, params=None, sid=None):
	global buf, nid
	nid += 1
	m = {"id": nid, "method": method, "params": params or {}}
	if sid:
		m["sessionId"] = sid
	os.write(w_cmd, json.dumps(m).encode() + b"\0")
	while True:
		while b"\0" in buf:
			msg, buf = buf.split(b"\0", 1)
			r = json.loads(msg)
			if r.get("id") == nid:
				return r
		c = os.read(r_ev, 1 << 16)
		if not c:
			sys.exit("chromium closed the pipe")
		buf += c
try:
	for _ in range(100):
		t = [x for x in call("Target.getTargets")["result"]["targetInfos"] if x["type"] == "page"]
		if t:
			break
		time.sleep(0.1)
	sid = call("Target.attachToTarget", {"targetId": t[0]["targetId"], "flatten": True})["result"]["sessionId"]
	end, out = time.time() + float(limit), ""
	while time.time() < end and want not in out:
		time.sleep(0.3)
		r = call("Runtime.evaluate", {"expression": "(document.getElementById('cbn-status')||{}).textContent||''",
			"returnByValue": True}, sid)
		out = r.get("result", {}).get("result", {}).get("value", "") or ""
	print("\n".join(l for l in out.splitlines() if want in l))
finally:
	p.kill()
	p.wait()
PY

fps()   # PAGE SLICES [CHROMIUM FLAGS]: the page's fps line
{
	CBN_CHROMIUM_FLAGS="${*:3}" /usr/bin/python3 "$TMP/cdp.py" "$B" \
		"file://$1#timeline&selftest=fps&slices=$2&ms=3000" \
		'bench timeline.fps' 60 "$TMP/profile-fps" | sed 's/^bench timeline.fps ok //'
}

if [ -n "${FPS_ONLY:-}" ] || [ -z "$SIZES" ]; then SIZES=""; fi
echo '<!DOCTYPE html><p>blank' >"$TMP/blank.htm"
if [ -n "$SIZES" ]; then
blank=$(render "$TMP/blank.htm" '')
echo "chromium --dump-dom on a blank page: $blank ms (best of 3)"
printf '%-9s %9s %10s %9s %14s %14s %9s %9s %7s\n' samples session report_s html_KiB \
	overview_ms overview-blank all_ms all-blank rects
for n in $SIZES; do
	rm -rf "$TMP/s"
	"$gen" "$TMP/s" "$n" 30 >/dev/null
	t0=$(now_ns)
	"$CBN" report -q --html "$TMP/p.html" "$TMP/s" >/dev/null 2>"$TMP/err" ||
		die "report --html failed: $(head -n 3 "$TMP/err")"
	t1=$(now_ns)
	ow=$(render "$TMP/p.html" '#overview')
	aw=$(render "$TMP/p.html" '#all')
	render "$TMP/p.html" '#timeline&selftest=lanes' >/dev/null
	rects=$(grep -o 'rects=[0-9]*' "$TMP/dom.html" | head -1 | cut -d= -f2)
	printf '%-9s %6s MiB %10s %9s %14s %14s %9s %9s %7s\n' "$n" \
		"$(( $(du -k "$TMP/s" | cut -f1) / 1024 ))" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')" \
		"$(( $(stat -c %s "$TMP/p.html") / 1024 ))" "$ow" "$((ow - blank))" "$aw" "$((aw - blank))" \
		"${rects:-?}"
done
fi

# the timeline's frame rate: a small real page (its timeline is replaced)
rm -rf "$TMP/s"
"$gen" "$TMP/s" 10000 30 >/dev/null
"$CBN" report -q --html "$TMP/fps.html" "$TMP/s" >/dev/null 2>&1 || die "report --html failed"
echo "timeline frame rate (60 fps target; pans and zooms every frame for 3 s; load: $(cut -d' ' -f1-3 /proc/loadavg)):"
echo " at the display's rate (headless: 60 Hz begin-frames):"
for n in "${FPS_SLICES:-100000}" 20; do
	echo "  $(fps "$TMP/fps.html" "$n")"
done
# the same with the frame-rate limit off: a frame starts as soon as the last
# one is on screen, so frames/s is 1 / the whole frame's cost (script,
# raster, composite) and says how far above 60 the page could go
unlocked="--disable-frame-rate-limit --disable-gpu-vsync"
echo " frame-rate limit off ($unlocked):"
for n in "${FPS_SLICES:-100000}" 20; do
	echo "  $(fps "$TMP/fps.html" "$n" $unlocked)"
done
echo " frame-rate limit off, 2 device pixels per CSS pixel (a HiDPI screen: 4 times the pixels):"
echo "  $(fps "$TMP/fps.html" "${FPS_SLICES:-100000}" $unlocked --force-device-scale-factor=2)"
