#!/bin/bash
# html_timeline — the --html timeline of a --schedule run (examples/
# step_cold: 12 steps, 3 of them recorded, a fifth of the run) opens on its
# capture window and says so, with ticks at round values in units (the
# timeline.lanes self-check, which also zooms, pans and resets with the
# keys), and its overview's step-time breakdown has a bar per recorded
# step (3), each adding up to its step, on a time axis with a legend.  One
# browser launch.
. "$(dirname "$0")/lib/common.bash"
. "$CBN_SOURCE_DIR/tests/html/browser.bash"
need_cbn
need_example step_cold

run_cbn -q --schedule wait=2,warmup=1,active=3,repeat=1 --html "$T/cap.html" -- "$EXAMPLES/step_cold" 0.5
expect_rc 0
html_open "$T/cap.html" '#overview,timeline&selftest=all' html_timeline_capture 2000
html_expect '^render overview ok' '^render timeline ok' \
	'^selftest timeline\.lanes ok .*\(the capture windows\) ticks=' \
	'^selftest overview\.breakdown ok bars=3 per=step legend=.*Idle axis=0 [mu]?s\.\.'

exit 0
