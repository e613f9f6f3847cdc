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
# frame draws (its self-test).  docs/html.md gives the figures.  Not part of
# ctest.  Usage: bench/html.sh [BUILD_DIR]   Env: SIZES ("10000 100000 1000000").
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

echo '<!DOCTYPE html><p>blank' >"$TMP/blank.htm"
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
