#!/bin/bash
# wait_lock — lock contention on a known lock (examples/wait_lock.c: the
# thread "holder" holds one mutex 6 ms of every 10 ms for 40 periods; two
# waiters take it at LOCK-SITE in contend()).  Under --off-cpu (100 Hz):
#   - one contended lock, taken at contend() (wait_lock.c, LOCK-SITE), by 2
#     waiters, its holder "holder" for >= 45 % of the wait (the true share is
#     ~100 %, but the agent reads the owner word once per OFFCPU stretch, and
#     a stretch spans a waiter's consecutive waits at the same place: one
#     begun while the word read 0 (the holder between its unlock and the
#     wake-up) leaves all its waits without an owner; seen on one waiter of
#     two, in one run of four);
#   - contended (the union of the waits) 0.3..0.9 of the holder's lifetime
#     (it holds 0.6 of it; a 6 ms wait is shorter than a 10 ms period, so it
#     is seen in proportion, about 24 looks per waiter: ± 0.3);
#   - each waiter waited in the lock 0.6..1.4 x contended, and the waits on
#     other locks (the waiters' brief turns) are under 10 % of it;
#   - the holder's held_for_ns covers most of the wait it caused, and it
#     hardly waited itself; the critical thread is the holder (or none, when
#     load kept the holder waiting for a CPU most of its life).
# The shares are measured against the holder's own lifetime, not fixed
# milliseconds: on a loaded machine the holder is preempted while holding
# and both stretch alike.  The text report has the verdict and the lock
# section.  Without --off-cpu: the verdict too, an efficiency, no lock.
# On a loaded machine the agent's sampler thread can be starved for a while,
# and the agent counts a late look as at most four periods, so the waits come
# out short (seen: a 300 ms poll as 76 ms, once in a dozen runs beside other
# tests): the off-CPU run is tried twice, and fails only when both miss.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example wait_lock
PY=/usr/bin/python3
LOCK_LINE=$(grep -n '/\* LOCK-SITE \*/' "$CBN_SOURCE_DIR/examples/wait_lock.c" | cut -d: -f1)

for attempt in 1 2; do
	run_cbn --off-cpu --json "$T/r.json" -- "$EXAMPLES/wait_lock"
	expect_rc 0
	grep_out '^wait_lock: 40 periods, done'
	grep_out '^  Verdict:    '
	grep_out 'Lock contention'
	grep_out 'Off-CPU: where threads waited'
	if $PY - "$T/r.json" "$LOCK_LINE" <<'PYEOF'
import json, sys
w = json.load(open(sys.argv[1]))["waiting"]
ms = 1e6
assert w["offcpu"] is True and w["rate_hz"] == 100, (w["offcpu"], w["rate_hz"])
th = {t["name"]: t for t in w["per_thread"]}
h = th["holder"]
assert w["locks"], "no lock found"
l = w["locks"][0]
print("# lock %s at %s %s:%s: wait %.0f ms, contended %.0f ms of the holder's %.0f ms, "
      "%d waiters, holder %s (%.2f)" % (l["addr"], l["function"], l["file"], l["line"],
      l["wait_ns"] / ms, l["contended_ns"] / ms, h["wall_ns"] / ms, l["waiters"],
      l["holder_name"], l["holder_share"]), file=sys.stderr)
assert isinstance(l["addr"], str) and int(l["addr"], 16) != 0, l["addr"]
assert l["function"] == "contend", l
assert l["file"].endswith("wait_lock.c") and l["line"] == int(sys.argv[2]), l
assert l["waiters"] == 2, l
assert l["holder_name"] == "holder" and l["holder_share"] >= 0.45, l
assert 0.3 * h["wall_ns"] <= l["contended_ns"] <= 0.9 * h["wall_ns"], (l, h["wall_ns"])
assert l["contended_ns"] <= l["wait_ns"] <= 2.2 * l["contended_ns"], l
assert all(o["wait_ns"] <= 0.1 * l["wait_ns"] for o in w["locks"][1:]), w["locks"]
for n in ("waiter-1", "waiter-2"):
    t = th[n]
    print("# %s: lock wait %.0f ms, futex %.0f ms" % (n, t["lock_wait_ns"] / ms,
          t["off_cpu"].get("futex", 0) / ms), file=sys.stderr)
    assert 0.6 * l["contended_ns"] <= t["lock_wait_ns"] <= 1.4 * l["contended_ns"], (n, t)
    assert t["lock_wait_ns"] <= t["off_cpu"].get("futex", 0), (n, t)
print("# holder: held for others %.0f ms, lock wait %.0f ms, busy %.2f" % (
      h["held_for_ns"] / ms, h["lock_wait_ns"] / ms, h["busy"]), file=sys.stderr)
assert h["held_for_ns"] >= 0.8 * l["wait_ns"] * l["holder_share"], (h, l)
assert h["lock_wait_ns"] <= 0.1 * l["wait_ns"], h
c = w["critical"]
print("# critical: %s" % c, file=sys.stderr)
# the holder, or none when load kept the holder runnable-but-not-running for
# most of its life (busy < 0.35: the analysis counts only running threads as
# the ones others wait for); never another thread
assert (c is not None and c["name"] == "holder") or (c is None and h["busy"] < 0.35), (c, h)
PYEOF
	then
		break
	fi
	[ "$attempt" = 2 ] && fail "wait_lock --off-cpu: the lock (in both tries)"
	note "wait_lock --off-cpu: the lock: missed in the first try; once more"
done

# The waiting object with locks, sites and a critical thread, against the
# schema (when python3 has jsonschema: json_schema.sh says when it is missing)
if python3 -c 'import jsonschema' 2>/dev/null; then
	validate_schema "$T/r.json"
fi

# The verdict without --off-cpu: no stacks off the CPU, so no lock.
run_cbn --json "$T/c.json" -- "$EXAMPLES/wait_lock"
expect_rc 0
grep_out '^  Verdict:    '
$PY - "$T/c.json" <<'PYEOF' || fail "wait_lock without --off-cpu"
import json, sys
w = json.load(open(sys.argv[1]))["waiting"]
print("# verdict %s: %s" % (w["verdict"], w["verdict_text"]), file=sys.stderr)
assert w["offcpu"] is False and not w["locks"], w
assert w["verdict"], "no verdict for a run with samples"
assert 0 < w["efficiency"] <= 1.0, w["efficiency"]
PYEOF
exit 0
