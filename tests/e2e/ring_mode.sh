#!/bin/bash
# ring_mode — --ring keeps the last stretch of a run in a bounded file:
# ring_phases burns CPU in early_phase for 1.5 s, then in late_phase for 1 s,
# every sample 60 frames deep, so a 1 MiB file fills in well under a second at
# 4 kHz.  With --ring 0.5s --buffer-mb 1: the program's output and status are
# its own, the session file stays within its bound, chunks were reused, and
# the report holds late_phase and nothing of early_phase.  Its stacks are
# written whole (CBN_SHARE_STACKS=0): shared with the sample before (the
# default), a 60-frame sample of a steady loop takes a few words and the file
# would not fill in this run's time.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example ring_phases

CBN_SHARE_STACKS=0 run_cbn -F 4000 --ring 0.5s --buffer-mb 1 -o "$T/s" --json "$T/r.json" -- "$EXAMPLES/ring_phases"
expect_rc 0
grep_out '^ring_phases: done'
grep_out 'late_phase'
grep -q 'early_phase' "$OUTF" && fail "early_phase is in the report: the ring kept more than its last 0.5 s"
line=$(grep '^  Ring:' "$OUTF") || fail "no Ring: line in the header"
reused=$(sed -n 's/.*kept; \([0-9]*\) older chunks reused.*/\1/p' <<<"$line")
[ -n "$reused" ] && [ "$reused" -gt 0 ] || fail "no chunk was reused: $line"
for f in "$T"/s/*.cbp; do
	size=$(stat -c %s "$f")
	[ "$size" -le $((1024 * 1024 + 64 * 1024)) ] || fail "$f is $size bytes: over its 1 MiB bound"
done
# The report of the kept session says the same.
"$CBN" report -q "$T/s" >"$T/again.txt" 2>&1 || fail "report of the kept ring session failed"
grep -q late_phase "$T/again.txt" || fail "report DIR lost late_phase"
# Shared stacks (the default) fill the ring too at 10 kHz for twice as long:
# a recycled chunk starts a new base (the old one's samples are gone), so
# every kept sample reads back whole and nothing is damaged.
run_cbn -F 10000 --ring 0.5s --buffer-mb 1 -o "$T/s2" -- "$EXAMPLES/ring_phases" 2
expect_rc 0
grep_out 'late_phase'
grep -q 'early_phase' "$OUTF" && fail "shared stacks: early_phase is in the report"
line=$(grep '^  Ring:' "$OUTF") || fail "shared stacks: no Ring: line in the header"
reused=$(sed -n 's/.*kept; \([0-9]*\) older chunks reused.*/\1/p' <<<"$line")
[ -n "$reused" ] && [ "$reused" -gt 0 ] || fail "shared stacks: no chunk was reused: $line"
grep -qiE 'corrupt|damage' "$OUTF" "$ERRF" && fail "shared stacks in a ring read as damage: $(cat "$ERRF")"
exit 0
