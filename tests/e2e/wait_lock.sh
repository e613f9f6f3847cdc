#!/bin/bash
# wait_lock — lock contention on a known lock (examples/wait_lock.c: the
# thread "holder" holds one mutex 6 ms of every 10 ms for 40 periods; two
# waiters take it at LOCK-SITE in contend()).  Under --off-cpu=1000: one
# contended lock, taken at contend() (wait_lock.c, LOCK-SITE), 2 waiters, its
# holder "holder" for >= 80 % of the wait; the lock was contended for about
# 60 % of the holder's 400 ms (union of waits, 240 ms, 150..330 ms: the hold
# is timed by wall clock, so load stretches neither); each waiter waited in
# the lock for about that long; the holder's held_for_ns is the others' wait
# it caused; the critical thread is the holder.  The text report names the
# lock section and the verdict.  Without --off-cpu the verdict is there too,
# and no lock (locks need off-CPU stacks).
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example wait_lock
PY=/usr/bin/python3
LOCK_LINE=$(grep -n '/\* LOCK-SITE \*/' "$CBN_SOURCE_DIR/examples/wait_lock.c" | cut -d: -f1)

run_cbn --off-cpu=1000 --json "$T/r.json" -- "$EXAMPLES/wait_lock"
expect_rc 0
grep_out '^wait_lock: 40 periods, done'
grep_out '^Verdict: '
grep_out 'Lock contention'
grep_out 'Off-CPU: where threads waited'
$PY - "$T/r.json" "$LOCK_LINE" <<'PYEOF' || fail "wait_lock --off-cpu: the lock"
import json, sys
w = json.load(open(sys.argv[1]))["waiting"]
ms = 1e6
assert w["offcpu"] is True and w["rate_hz"] == 1000, (w["offcpu"], w["rate_hz"])
assert w["locks"], "no lock found"
l = w["locks"][0]
print("# lock %s at %s %s:%s: wait %.0f ms, contended %.0f ms, %d waiters, holder %s (%.2f)" % (
      l["addr"], l["function"], l["file"], l["line"], l["wait_ns"] / ms, l["contended_ns"] / ms,
      l["waiters"], l["holder_name"], l["holder_share"]), file=sys.stderr)
assert isinstance(l["addr"], str) and int(l["addr"], 16) != 0, l["addr"]
assert l["function"] == "contend", l
assert l["file"].endswith("wait_lock.c") and l["line"] == int(sys.argv[2]), l
assert l["waiters"] == 2, l
assert l["holder_name"] == "holder" and l["holder_share"] >= 0.8, l
assert 150 * ms <= l["contended_ns"] <= 330 * ms, l
assert l["contended_ns"] <= l["wait_ns"] <= 2.2 * l["contended_ns"], l
# the other locks, if any (the waiters' few waits on each other), are minor
assert all(o["wait_ns"] <= 0.1 * l["wait_ns"] for o in w["locks"][1:]), w["locks"]

th = {t["name"]: t for t in w["per_thread"]}
for n in ("waiter-1", "waiter-2"):
    t = th[n]
    print("# %s: lock wait %.0f ms, futex %.0f ms" % (n, t["lock_wait_ns"] / ms,
          t["off_cpu"].get("futex", 0) / ms), file=sys.stderr)
    assert 150 * ms <= t["lock_wait_ns"] <= 330 * ms, (n, t)
    assert t["lock_wait_ns"] <= t["off_cpu"].get("futex", 0), (n, t)
h = th["holder"]
print("# holder: held for others %.0f ms, busy %.2f" % (h["held_for_ns"] / ms, h["busy"]),
      file=sys.stderr)
assert h["held_for_ns"] >= 0.8 * l["wait_ns"] * l["holder_share"] - 20 * ms, (h, l)
assert h["lock_wait_ns"] <= 20 * ms, h
c = w["critical"]
print("# critical: %s" % c, file=sys.stderr)
assert c is not None and c["name"] == "holder", c
PYEOF

# The verdict without --off-cpu: no stacks off the CPU, so no lock.
run_cbn --json "$T/c.json" -- "$EXAMPLES/wait_lock"
expect_rc 0
grep_out '^Verdict: '
$PY - "$T/c.json" <<'PYEOF' || fail "wait_lock without --off-cpu"
import json, sys
w = json.load(open(sys.argv[1]))["waiting"]
print("# verdict %s: %s" % (w["verdict"], w["verdict_text"]), file=sys.stderr)
assert w["offcpu"] is False and not w["locks"], w
assert w["verdict"], "no verdict for a run with samples"
assert 0 < w["efficiency"] <= 1.0, w["efficiency"]
PYEOF
exit 0
