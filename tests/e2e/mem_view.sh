#!/bin/bash
# mem_view — the memory view end to end on examples with known allocation
# behaviour (examples/mem_*.c): the host peak of mem_peak (64 MiB from the
# line marked PEAK-SITE, exact counters: within 5 %), the leak of mem_leak
# (8 MiB from LEAK-SITE: exactly with --memory-rate 1, within 30 % sampled at
# 64 KiB, i.e. over 3 standard deviations of a Poisson count of 128), the
# churn rule on mem_churn's CHURN-SITE, blocks freed by another thread in
# mem_threads (no leak), and the program's own output and exit status kept.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example mem_peak
need_example mem_leak
need_example mem_churn
need_example mem_threads

line_of() { grep -n "/\* $2 \*/" "$CBN_SOURCE_DIR/examples/$1" | head -1 | cut -d: -f1; }
PEAK_LINE=$(line_of mem_peak.c PEAK-SITE)
LEAK_LINE=$(line_of mem_leak.c LEAK-SITE)
CHURN_LINE=$(line_of mem_churn.c CHURN-SITE)
PROD_LINE=$(line_of mem_threads.c PRODUCE-SITE)

# peak: exact counters, the site at the peak, the range of the text report
run_cbn --memory --json "$T/p.json" -- "$EXAMPLES/mem_peak"
expect_rc 0
grep_out '^peak 64 MiB'
grep_out '^Memory: host'
grep_out 'Live at the peak'
python3 - "$T/p.json" "$PEAK_LINE" <<'PY' || fail "mem_peak: peak or its site"
import json, sys
d = json.load(open(sys.argv[1]))
m = d["memory"]
host = [s for s in m["spaces"] if s["kind"] == "host"]
assert len(host) == 1, m["spaces"]
h = host[0]
mib = 1 << 20
print("peak %.2f MiB exact=%s" % (h["peak_bytes"] / mib, h["peak_exact"]), file=sys.stderr)
assert h["peak_exact"], h
assert 64 * mib <= h["peak_bytes"] <= 64 * mib * 1.05, h["peak_bytes"]
top = m["sites"][h["at_peak"][0]["site"]]
print("top site at the peak:", top["function"], top["file"], top["line"],
      "%.1f MiB" % (h["at_peak"][0]["bytes"] / mib), file=sys.stderr)
assert top["file"].endswith("mem_peak.c") and top["line"] == int(sys.argv[2]), top
assert 0.7 * 64 * mib <= h["at_peak"][0]["bytes"] <= 1.3 * 64 * mib, h["at_peak"][0]
PY

# leak, exact mode: every allocation recorded, 8192 x 1 KiB never freed
run_cbn --memory --memory-rate 1 --json "$T/l1.json" -- "$EXAMPLES/mem_leak"
expect_rc 0
grep_out '^leaked 8388608 bytes'
grep_out 'every allocation recorded'
python3 - "$T/l1.json" "$LEAK_LINE" exact <<'PY' || fail "mem_leak exact: the leak"
import json, sys
d = json.load(open(sys.argv[1]))
m = d["memory"]
assert m["exact"], m["rate"]
l = m["leaks"][0]
s = m["sites"][l["site"]]
print("leak %d bytes, %d blocks from %s:%d" % (l["bytes"], l["blocks"], s["file"], s["line"]),
      file=sys.stderr)
assert s["file"].endswith("mem_leak.c") and s["line"] == int(sys.argv[2]), s
assert l["bytes"] == 8388608 and l["blocks"] == 8192, l
assert any(r["id"] in ("leak", "leak-growing") for r in m["recommendations"]), m["recommendations"]
assert not any(r["id"] == "alloc-churn" for r in m["recommendations"]), "churn fired on 16 k allocations"
PY

# leak, sampled at 64 KiB: an estimate
run_cbn --memory --memory-rate 64K --json "$T/l2.json" -- "$EXAMPLES/mem_leak"
expect_rc 0
grep_out 'Leaks, host'
python3 - "$T/l2.json" "$LEAK_LINE" <<'PY' || fail "mem_leak sampled: the leak estimate"
import json, sys
d = json.load(open(sys.argv[1]))
m = d["memory"]
assert not m["exact"] and m["rate"] == 65536, m["rate"]
l = m["leaks"][0]
s = m["sites"][l["site"]]
print("leak estimate %.2f MiB from %s:%d" % (l["bytes"] / 2**20, s["file"], s["line"]), file=sys.stderr)
assert s["line"] == int(sys.argv[2]), s
assert 0.7 * 8388608 <= l["bytes"] <= 1.3 * 8388608, l
PY

# churn: the rule names the hot loop's line
run_cbn --memory --json "$T/c.json" -- "$EXAMPLES/mem_churn" 2
expect_rc 0
grep_out 'alloc-churn'
python3 - "$T/c.json" "$CHURN_LINE" <<'PY' || fail "mem_churn: churn site"
import json, sys
d = json.load(open(sys.argv[1]))
m = d["memory"]
s = m["sites"][0]
print("top site %s:%d allocs ~%d, short-lived ~%d" % (s["file"], s["line"], s["allocs"],
      s["short_lived"]), file=sys.stderr)
assert s["file"].endswith("mem_churn.c") and s["line"] == int(sys.argv[2]), s
assert 1.4e6 <= s["allocs"] <= 2.6e6, s["allocs"]
assert s["short_lived"] >= 0.9 * s["allocs"], s
assert any(r["id"] == "alloc-churn" for r in m["recommendations"])
PY

# threads: freed by the consumer, nothing left live from the producers' site
run_cbn --memory --memory-rate 16K --json "$T/t.json" -- "$EXAMPLES/mem_threads"
expect_rc 0
grep_out '^freed 40000 blocks'
python3 - "$T/t.json" "$PROD_LINE" <<'PY' || fail "mem_threads: cross-thread frees"
import json, sys
d = json.load(open(sys.argv[1]))
m = d["memory"]
prod = [s for s in m["sites"] if s["file"].endswith("mem_threads.c") and s["line"] == int(sys.argv[2])]
assert prod, [(s["function"], s["line"]) for s in m["sites"][:5]]
s = prod[0]
print("producer site ~%.1f MiB allocated, ~%d bytes live at exit" % (s["bytes"] / 2**20,
      s["live_end_bytes"]), file=sys.stderr)
assert 0.7 * 40000 * 4096 <= s["bytes"] <= 1.3 * 40000 * 4096, s["bytes"]
assert s["live_end_bytes"] == 0, s
PY
exit 0
