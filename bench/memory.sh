#!/usr/bin/env bash
# memory.sh — what `--memory` costs and how true its peak is: for each
# workload, wall and CPU time (user+sys of everything the command ran) and max
# RSS as ratios against the same program unprofiled, for cbottleneck --memory
# at the default rate (512 KiB), in exact mode (--memory-rate 1) and for
# heaptrack, median of RUNS runs interleaved; then each tool's peak heap figure
# next to heaptrack's (which records every allocation: the reference) and the
# workload's own count where it prints one.
#
# Workloads: bench/alloc_storm.c (2 threads, millions of mixed malloc/free),
# python3 building and dropping dicts of strings (a Debian interpreter whose
# pymalloc arenas sit on malloc/mmap), sqlite3 filling an in-memory table (a
# Debian database shell).  Not part of ctest.
# Usage: bench/memory.sh [BUILD_DIR]   (default: build)
# Env: RUNS (5), WORKLOADS ("storm python sqlite"), EXACT=0 to leave out
#      --memory-rate 1, HEAPTRACK=0 to leave out heaptrack.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
CBN="$BUILD/cbottleneck"
RUNS=${RUNS:-5}
WORKLOADS=${WORKLOADS:-"storm python sqlite"}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cbn-membench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

die() { echo "memory.sh: $*" >&2; exit 1; }
[ -x "$CBN" ] || die "no launcher at $CBN; build first"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (apt-get install time)"
cc -std=c11 -D_GNU_SOURCE -O2 -g "$SRC/bench/alloc_storm.c" -o "$TMP/alloc_storm" -lpthread ||
	die "cannot build bench/alloc_storm.c"
cat >"$TMP/py.py" <<'PY'
import sys
keep = []
for r in range(6):
    d = {}
    for i in range(200000):
        d[i] = ("k%d" % i) * 4
    keep.append(d)
    if len(keep) > 3:
        keep.pop(0)
print(sum(len(d) for d in keep))
PY
cat >"$TMP/sq.sql" <<'SQL'
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000)
INSERT INTO t SELECT i, printf('row %d %s', i, hex(randomblob(16))), i * 0.5 FROM n;
CREATE INDEX tb ON t(b);
SELECT count(*), sum(length(b)) FROM t;
SQL

# The interpreter itself, not a wrapper script that execs it (pyenv shims).
PY3=$(command -v /usr/bin/python3 || command -v python3)
TOOLS=(base cbn)
[ "${EXACT:-1}" = 1 ] && TOOLS+=(exact)
HT_WHY=""
if [ "${HEAPTRACK:-1}" = 1 ]; then
	if command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null; then
		TOOLS+=(heaptrack)
	else
		HT_WHY="heaptrack not installed (apt-get install heaptrack)"
	fi
fi

cmd_of()
{
	case $1 in
	storm) echo "$TMP/alloc_storm 2 2000000" ;;
	python) echo "$PY3 $TMP/py.py" ;;
	sqlite) echo "sqlite3 -batch -init $TMP/sq.sql :memory: .quit" ;;
	*) die "unknown workload $1" ;;
	esac
}

now_ns() { date +%s%N; }

# run_one TOOL WORKLOAD: appends "wall_s cpu_s maxrss_kb peak_bytes" to its file.
run_one()
{
	local tool=$1 wl=$2 t0 t1 rc=0 peak=NaN
	local -a cmd
	read -r -a cmd <<<"$(cmd_of "$wl")"
	rm -rf "$TMP/sess" "$TMP"/ht.*
	t0=$(now_ns)
	case $tool in
	base) /usr/bin/time -f "%U %S %M" -o "$TMP/tm" "${cmd[@]}" >/dev/null 2>&1 || rc=$? ;;
	cbn) /usr/bin/time -f "%U %S %M" -o "$TMP/tm" "$CBN" --memory -o "$TMP/sess" \
		--json "$TMP/r.json" -- "${cmd[@]}" >/dev/null 2>&1 || rc=$? ;;
	exact) /usr/bin/time -f "%U %S %M" -o "$TMP/tm" "$CBN" --memory --memory-rate 1 \
		-o "$TMP/sess" --json "$TMP/r.json" -- "${cmd[@]}" >/dev/null 2>&1 || rc=$? ;;
	heaptrack) /usr/bin/time -f "%U %S %M" -o "$TMP/tm" heaptrack -o "$TMP/ht" \
		"${cmd[@]}" >/dev/null 2>&1 || rc=$? ;;
	esac
	t1=$(now_ns)
	if [ "$rc" != 0 ]; then
		echo "memory.sh: $tool failed on $wl (exit $rc)" >&2
		echo "NaN NaN NaN NaN" >>"$TMP/t.$wl.$tool"
		return
	fi
	case $tool in
	cbn | exact)
		peak=$(python3 "$SRC/bench/mem_peak.py" "$TMP/r.json" 2>/dev/null || echo NaN) ;;
	heaptrack)
		peak=$(heaptrack_print "$TMP"/ht.* 2>/dev/null |
			sed -n 's/^peak heap memory consumption: //p' | python3 -c '
import sys
s = sys.stdin.read().strip()
m = {"B": 1, "K": 1e3, "M": 1e6, "G": 1e9}
print(float(s[:-1]) * m[s[-1]] if s and s[-1] in m else float(s or "nan"))') ;;
	esac
	echo "$(( (t1 - t0) / 1000 ))e-6 $(awk '{ print $1 + $2, $3 }' "$TMP/tm") $peak" >>"$TMP/t.$wl.$tool"
}

med()  # med FILE COLUMN
{
	awk -v c="$2" '{ print $c }' "$1" | sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "NaN"; exit }
		print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo "cbottleneck --memory cost: ratios against the unprofiled program, median of $RUNS runs"
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), Linux $(uname -r), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "cbn = cbottleneck --memory (rate 512 KiB), exact = --memory-rate 1; both include symbolizing and the report"
[ -n "$HT_WHY" ] && echo "heaptrack: n/a ($HT_WHY)"
echo

for wl in $WORKLOADS; do
	read -r -a warm <<<"$(cmd_of "$wl")"
	"${warm[@]}" >/dev/null 2>&1 || die "$wl does not run"
	for ((r = 0; r < RUNS; r++)); do
		for t in "${TOOLS[@]}"; do run_one "$t" "$wl"; done
	done
done

printf '%-8s %-10s %8s %8s %8s %10s %12s\n' workload tool wall cpu maxrss "wall(s)" "peak heap"
for wl in $WORKLOADS; do
	bw=$(med "$TMP/t.$wl.base" 1); bc=$(med "$TMP/t.$wl.base" 2); br=$(med "$TMP/t.$wl.base" 3)
	for t in "${TOOLS[@]}"; do
		w=$(med "$TMP/t.$wl.$t" 1); c=$(med "$TMP/t.$wl.$t" 2); r=$(med "$TMP/t.$wl.$t" 3)
		p=$(med "$TMP/t.$wl.$t" 4)
		awk -v wl="$wl" -v t="$t" -v w="$w" -v c="$c" -v r="$r" -v bw="$bw" -v bc="$bc" \
			-v br="$br" -v p="$p" 'BEGIN {
			pk = (p == "NaN" || t == "base") ? "-" : sprintf("%.2f MB", p / 1e6)
			printf "%-8s %-10s %7.2fx %7.2fx %7.2fx %10.3f %12s\n", wl, t, w / bw, c / bc, r / br, w, pk }'
	done
done
