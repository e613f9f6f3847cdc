#!/bin/bash
# wait_poll — a thread sleeping in poll() for a known time (examples/wait_poll.c:
# "poller" waits 300 ms at POLL-SITE in wait_in_poll while main computes).
# Under --off-cpu: the site wait_in_poll (POLL-SITE), kind poll, one thread,
# 300 ms, 215..400 ms, and the poller's own poll time the same; main is the
# busiest thread and hardly blocked (under 30 % of its life: it computes; on
# a loaded machine it waits runnable, which is not blocked); one busy thread
# of two, so the efficiency is main's CPU over the wall (± 0.05).  The text
# report has the verdict.
# On a loaded machine the agent's sampler thread can be starved for a while,
# and the agent counts a late look as at most four periods, so the waits come
# out short (seen: a 300 ms poll as 76 ms, once in a dozen runs beside other
# tests): the off-CPU run is tried twice, and fails only when both miss.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example wait_poll
PY=/usr/bin/python3
POLL_LINE=$(grep -n '/\* POLL-SITE \*/' "$CBN_SOURCE_DIR/examples/wait_poll.c" | cut -d: -f1)

for attempt in 1 2; do
	run_cbn --off-cpu --json "$T/r.json" -- "$EXAMPLES/wait_poll"
	expect_rc 0
	grep_out '^wait_poll: poll returned 0 \(timeout\)'
	grep_out '^  Verdict:    '
	grep_out 'Off-CPU: where threads waited'
	if $PY - "$T/r.json" "$POLL_LINE" <<'PYEOF'
import json, sys
w = json.load(open(sys.argv[1]))["waiting"]
ms = 1e6
assert w["offcpu"] is True, w["offcpu"]
sites = [s for s in w["sites"] if s["function"] == "wait_in_poll"]
assert sites, [(s["function"], s["kind"], s["ns"]) for s in w["sites"]]
s = sites[0]
print("# site %s %s:%s call %s kind %s %.0f ms, %d thread(s)" % (s["function"], s["file"],
      s["line"], s["call"], s["kind"], s["ns"] / ms, s["threads"]), file=sys.stderr)
assert s["kind"] == "poll" and s["threads"] == 1, s
assert s["file"].endswith("wait_poll.c") and s["line"] == int(sys.argv[2]), s
assert 215 * ms <= s["ns"] <= 400 * ms, s
th = {t["name"]: t for t in w["per_thread"]}
p = th["poller"]
print("# poller: poll %.0f ms; off_cpu %s" % (p["off_cpu"].get("poll", 0) / ms, p["off_cpu"]),
      file=sys.stderr)
assert 215 * ms <= p["off_cpu"].get("poll", 0) <= 400 * ms, p
assert w["off_cpu"]["poll"] >= p["off_cpu"]["poll"], w["off_cpu"]
main = max(w["per_thread"], key=lambda t: t["cpu_ns"])
print("# busiest: %s cpu %.0f ms busy %.2f off %.0f ms; busy threads %d, efficiency %.2f" % (
      main["name"], main["cpu_ns"] / ms, main["busy"], main["off_ns"] / ms,
      w["busy_threads"], w["efficiency"]), file=sys.stderr)
assert main["name"] != "poller" and main["cpu_ns"] > 0, main
assert main["off_ns"] <= 0.3 * main["wall_ns"], main
assert w["busy_threads"] == 1, w["busy_threads"]
assert abs(w["efficiency"] - main["cpu_ns"] / w["wall_ns"]) <= 0.05, (w["efficiency"], main)
PYEOF
	then
		break
	fi
	[ "$attempt" = 2 ] && fail "wait_poll --off-cpu: the poll wait (in both tries)"
	note "wait_poll --off-cpu: the poll wait: missed in the first try; once more"
done
exit 0
