#!/usr/bin/env bash
# callgraph_check.sh CALLGRAPH_PY 'OBJ;OBJ;...' — tools/callgraph.py finds a
# call cycle, a call up a layer and a file in no layer in the fixture
# (layers/: high.c calls low.c; loop_a.c and loop_b.c call each other) and
# two objects of one name, and passes a table that matches it.
set -u
py=$1
IFS=';' read -r -a objs <<<"$2"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0

obj() {
	local o
	for o in "${objs[@]}"; do
		case $(basename "$o") in "$1".c.o | "$1".o) echo "$o"; return ;; esac
	done
	echo "callgraph_check: no object for $1.c among: $2" >&2
	exit 1
}
low=$(obj low "$2") && high=$(obj high "$2") && a=$(obj loop_a "$2") && b=$(obj loop_b "$2") ||
	exit 1

# expect RC PATTERN ARGS...: callgraph.py ARGS exits RC and prints PATTERN.
expect() {
	local rc=$1 pat=$2 got
	shift 2
	python3 "$py" "$@" >"$T/out" 2>&1
	got=$?
	if [ "$got" != "$rc" ] || ! grep -q -- "$pat" "$T/out"; then
		echo "FAIL: callgraph.py $* exited $got (want $rc), output (want '$pat'):"
		sed 's/^/  /' "$T/out"
		fails=$((fails + 1))
	fi
}

printf 'low: low.c\nhigh: high.c\n' >"$T/good"
printf '# comment\nlow: high.c\n\nhigh:\n  low.c\n' >"$T/upside"
printf 'low: low.c\n' >"$T/short"
printf 'low: low.c high.c\nhigh: gone.c\n' >"$T/stale"

expect 0 "no call cycle among 2 files, and none up a layer of 2" --layers "$T/good" "$low;$high"
expect 1 "call up a layer: high.c (low) -> low.c (high): low_f" --layers "$T/upside" "$low" "$high"
expect 1 "high.c is in no layer" --layers "$T/short" "$low;$high"
expect 1 "names gone.c, which is not among the objects" --layers "$T/stale" "$low;$high"
expect 1 "cycle of 2 files: loop_a.c loop_b.c" "$a" "$b" "$low"
expect 0 "no call cycle among 2 files" --allow loop_a.c,loop_b.c "$a" "$b"
expect 0 '"high.c" -> "low.c"' --dot "$low" "$high"
expect 1 "two objects named low.c" "$low" "$high" "$low"

[ "$fails" = 0 ] && echo "callgraph.py: 8 of 8 cases as expected"
exit $((fails > 0))
