#!/usr/bin/env bash
# dist.sh — merging a distributed run: synthetic sessions of 16, 64, 256 and
# 1024 ranks x 10 k samples each (bench/gen_session.c: FRAMES frames over 256
# real functions, 4 threads, 10 steps of MPI_Allreduce and a Send/Recv ring,
# four ranks per host with clock records), then `cbottleneck report DIR
# --json` on each: its wall time and peak RSS (GNU time's maximum resident
# set), in all and per rank.  Target (issue 13): linear, 1024 ranks x 10 k
# samples in <= 30 s.  docs/distributed.md ("Scale") gives the figures.  Not
# part of ctest.  Usage: bench/dist.sh [BUILD_DIR]
# Env: RANKS ("16 64 256 1024"), SAMPLES (10000), FRAMES (16).
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
CBN="$BUILD/cbottleneck"
RANKS=${RANKS:-"16 64 256 1024"}
SAMPLES=${SAMPLES:-10000}
FRAMES=${FRAMES:-16}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cbn-dist-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

die() { echo "dist.sh: $*" >&2; exit 1; }
now_ns() { date +%s%N; }
[ -x "$CBN" ] || die "no launcher at $CBN: build first"
[ -x /usr/bin/time ] || die "no /usr/bin/time (GNU time) for the peak RSS"
gen="$TMP/gen_session"
cc -std=c11 -D_GNU_SOURCE -O2 -g -I"$SRC/src/format" "$SRC/bench/gen_session.c" -o "$gen" ||
	die "cannot build bench/gen_session.c"

printf 'cbottleneck report DIR --json, %s samples x %s frames per rank:\n' "$SAMPLES" "$FRAMES"
printf '%6s %10s %10s %12s %12s %12s\n' ranks "data MiB" "wall s" "ms/rank" "RSS MiB" "RSS KiB/rank"
for n in $RANKS; do
	rm -rf "$TMP/s"
	"$gen" "$TMP/s" "$SAMPLES" "$FRAMES" "$n" 2 >/dev/null || die "gen_session $n ranks failed"
	mib=$(du -sm "$TMP/s" | cut -f1)
	# warm the symbol cache and the page cache once, then time the second run
	"$CBN" report -q --json "$TMP/r.json" "$TMP/s" >/dev/null 2>&1 || true
	t0=$(now_ns)
	/usr/bin/time -f '%M' -o "$TMP/rss" "$CBN" report -q --json "$TMP/r.json" "$TMP/s" \
		>/dev/null 2>"$TMP/err" || die "report of $n ranks failed: $(tail -n 3 "$TMP/err")"
	t1=$(now_ns)
	rss=$(tail -n 1 "$TMP/rss")
	found=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["distributed"]["ranks_found"])' "$TMP/r.json")
	[ "$found" = "$n" ] || die "$n ranks generated, $found merged"
	awk -v n="$n" -v mib="$mib" -v ns=$((t1 - t0)) -v rss="$rss" 'BEGIN {
		printf "%6d %10d %10.2f %12.2f %12.1f %12.1f\n", n, mib, ns / 1e9, ns / 1e6 / n,
			rss / 1024, rss / n }'
done
