#!/usr/bin/env bash
# raw_reads.sh — writers only format (docs/architecture.md): no file of the
# writers reads the profile's raw per-event arrays, whose every figure,
# weight and site comes from struct analysis (the stacks' weights and frames:
# src/analysis/cpu/stackw.h; the off-CPU stretches: wait.h; the memory samples:
# mem_samples.h).
#
#   tools/raw_reads.sh [--self-test] [DIR|FILE...]
#     DIR...       folders searched for *.c and *.h (default: src/report)
#     --self-test  also check that each kind of read below is caught, on
#                  lines written to a scratch file (exit 1 when one is not)
#   prints "FILE:LINE: TEXT" for each read; exit 1 when there is one.
#
# A read is an index into or arithmetic on prof.samples, .stacks, .frames,
# .offcpu, .mem_allocs or .mem_frees ("p->samples[i]", "p->frames + k"),
# their lengths ("p->nstacks"), or their element types ("struct
# prof_sample", "struct prof_stack", "struct prof_offcpu", "struct
# prof_mem_alloc", "struct prof_mem_free").  A stack's frames come from
# stackw_frames(), which is a view and not a read.
set -euo pipefail

arrays='samples|stacks|frames|offcpu|mem_allocs|mem_frees'
pattern="(->|\.)($arrays)[[:space:]]*(\[|\+)|(->|\.)n($arrays)\b"
pattern+="|struct[[:space:]]+prof_(sample|stack|offcpu|mem_alloc|mem_free)\b"

self_test=0
args=()
for a in "$@"; do
	case $a in
	--self-test) self_test=1 ;;
	-h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "raw_reads.sh: unknown option $a (see --help)" >&2; exit 2 ;;
	*) args+=("$a") ;;
	esac
done
[ ${#args[@]} -gt 0 ] || args=(src/report)

if [ $self_test = 1 ]; then
	T=$(mktemp -d)
	trap 'rm -rf "$T"' EXIT
	missed=0
	while IFS= read -r line; do
		printf '%s\n' "$line" >"$T/w.c"
		if ! grep -qE "$pattern" "$T/w.c"; then
			echo "raw_reads.sh: self-test: not caught: $line" >&2
			missed=$((missed + 1))
		fi
	done <<'LINES'
	const struct prof_sample *s = &p->samples[i];
	for (i = 0; i < p->nsamples; i++)
	w += a->profile->offcpu[k].weight_ns;
	const struct prof_frame *f = p->frames + sk->first;
	if (stack < p->nstacks)
	struct prof_stack *sk = x;
	uint64_t n = prof->nmem_allocs;
	const struct prof_offcpu *o = c->p->offcpu;
LINES
	# and what a writer may read is not taken for a raw read
	printf '%s\n' 'fr = stackw_frames(p, st, &n);' '(double)c->samples,' 'w->offcpu != 0' \
		'u->frames' >"$T/ok.c"
	if grep -nE "$pattern" "$T/ok.c" >&2; then
		echo "raw_reads.sh: self-test: the lines above were taken for raw reads" >&2
		missed=$((missed + 1))
	fi
	[ $missed = 0 ] || exit 1
fi

files=$(find "${args[@]}" -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort)
[ -n "$files" ] || { echo "raw_reads.sh: no C files in ${args[*]}" >&2; exit 2; }
# shellcheck disable=SC2086
if grep -nE "$pattern" $files; then
	echo "raw_reads.sh: the lines above read the profile's raw arrays; take what they" \
		"need from struct analysis (docs/architecture.md, \"Writers only format\")" >&2
	exit 1
fi
exit 0
