#!/usr/bin/env bash
# startup.sh — what the agent costs each process it starts in (issue 21: at
# most 1 ms of CPU): a shell loop that execs /bin/true N times, and a shell
# script that forks N children (subshells, no exec), each run plainly and
# under cbottleneck, RUNS times interleaved.  The CPU measured is the shell's
# and its children's user+sys, read by the shell itself (`times`), so the
# launcher's own work after the run (reading the files, the report) is not
# in it; the agent's constructor alone is also read back from the session
# files (header.overhead.init_cpu_ns).  Prints, per workload, the medians and
# the added CPU per process in ms.  Not part of ctest.
# Usage: bench/startup.sh [BUILD_DIR]   Env: N (200), RUNS (5), CBN_ARGS.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
CBN="$BUILD/cbottleneck"
DUMP="$BUILD/tests/agent/cbpdump"
N=${N:-200}
RUNS=${RUNS:-5}
read -r -a CBN_ARGS <<<"${CBN_ARGS:-}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cbn-startup.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

die() { echo "startup.sh: $*" >&2; exit 1; }
[ -x "$CBN" ] || die "no launcher at $CBN; build first (cmake --build $BUILD)"
[ -x /bin/true ] || die "/bin/true is missing"

# The two workloads; each ends with `times`, whose two lines are the shell's
# own user/sys and its children's.
EXEC_LOOP="i=0; while [ \$i -lt $N ]; do /bin/true; i=\$((i+1)); done; times"
FORK_LOOP="i=0; while [ \$i -lt $N ]; do (:); i=\$((i+1)); done; times"

# cpu_of FILE: seconds of user+sys in a `times` output (both lines).
cpu_of() {
	awk '{ for (i = 1; i <= NF; i++) { split($i, f, /[ms]/); s += f[1] * 60 + f[2] } }
		END { printf "%.4f\n", s }' "$1"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# init_ms SESSION: the constructors' CPU summed over the session's files, ms.
init_ms() {
	[ -x "$DUMP" ] || { echo "-"; return; }
	find "$1" -name '*.cbp' | while read -r f; do "$DUMP" "$f" 2>/dev/null | grep '^overhead '; done |
		sed -n 's/.*init_cpu_ns=\([0-9]*\).*/\1/p' | awk '{ s += $1 } END { printf "%.2f\n", s / 1e6 }'
}

for w in exec fork; do
	script=$EXEC_LOOP
	[ $w = fork ] && script=$FORK_LOOP
	for r in $(seq "$RUNS"); do
		sh -c "$script" >"$TMP/plain.$w.$r"
		rm -rf "$TMP/sess"
		"$CBN" -q "${CBN_ARGS[@]}" -o "$TMP/sess" --report /dev/null -- sh -c "$script" \
			>"$TMP/prof.$w.$r" 2>/dev/null
		cpu_of "$TMP/plain.$w.$r" >>"$TMP/plain.$w"
		cpu_of "$TMP/prof.$w.$r" >>"$TMP/prof.$w"
		init_ms "$TMP/sess" >>"$TMP/init.$w"
	done
	plain=$(median <"$TMP/plain.$w")
	prof=$(median <"$TMP/prof.$w")
	init=$(median <"$TMP/init.$w" 2>/dev/null || echo -)
	awk -v w=$w -v n="$N" -v a="$plain" -v b="$prof" -v i="$init" 'BEGIN {
		printf "%-5s %d processes: plain %.3f s, profiled %.3f s CPU (x%.2f): +%.2f ms per process",
			w, n + 1, a, b, (a > 0 ? b / a : 0), (b - a) * 1000 / (n + 1)
		if (i != "-") printf "; constructors %.3f ms per process", i / (n + 1)
		printf "\n" }'
done
echo "(median of $RUNS; load: $(cut -d' ' -f1-3 /proc/loadavg))"
