#!/bin/bash
# cpu_inline — code the compiler inlined (examples/inlined.c: mix_hot and
# mix_cold always inlined into step, 3:1 work) is marked as such in every
# output with --inline expand (the default), and folded into step with
# --inline fold: text rows and the Ordered-by line, JSON flags, folded "_[i]", the flame
# graph and trace names, pprof's inline lines (go tool pprof shows "(inline)").
# ctest-labels: sanitize (the ASan+UBSan stage of .ci/run runs it)
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example inlined

run_cbn -F 999 -o "$T/s" --json "$T/e.json" --folded "$T/e.folded" --pprof "$T/e.pb.gz" \
	--flamegraph "$T/e.svg" --trace "$T/e.trace.json" -- "$EXAMPLES/inlined" 0.4
expect_rc 0
grep_out 'mix_hot \[inlined in step\]\)$'
grep_out 'mix_cold \[inlined in step\]\)$'
grep -q 'inline view: fold' "$OUTF" && fail "the expand view says fold"
python3 - "$T/e.json" <<'PY' || fail "JSON: inline flags or the 3:1 split"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["run"]["inline_view"] == "expand"
f = {x["name"]: x for x in d["functions"]}
hot, cold, step = f["mix_hot"], f["mix_cold"], f["step"]
assert hot["inlined"] and hot["inlined_into"] == "step", hot
assert cold["inlined"] and cold["inlined_into"] == "step", cold
assert not step["inlined"] and step["inlined_into"] == "", step
r = hot["self_ns"] / cold["self_ns"]
print("mix_hot:mix_cold = %.2f" % r, file=sys.stderr)
assert 2.0 <= r <= 4.5, r
PY
grep -q 'step;mix_hot_\[i\] ' "$T/e.folded" || fail "folded stacks lack mix_hot_[i] under step"
grep -q 'mix_hot \[inlined\]' "$T/e.svg" || fail "the flame graph does not mark mix_hot inlined"
grep -q '"mix_hot \[inlined\]"' "$T/e.trace.json" || fail "the trace does not mark mix_hot inlined"
if command -v go >/dev/null 2>&1; then
	go tool pprof -traces "$T/e.pb.gz" 2>/dev/null | grep -q 'mix_hot (inline)' ||
		fail "pprof: mix_hot is not an inline line of its location"
fi

# fold: the same session, their time is step's own
run_cbn report --inline fold --json "$T/f.json" --folded "$T/f.folded" "$T/s"
expect_rc 0
grep_out 'Ordered by: internal time \(tottime\); inline view: fold'
grep -q 'mix_hot' "$OUTF" && fail "fold still shows mix_hot"
grep -q 'mix_hot' "$T/f.folded" && fail "folded stacks still name mix_hot with --inline fold"
python3 - "$T/e.json" "$T/f.json" <<'PY' || fail "fold: step's self time is not mix_hot's + mix_cold's + its own"
import json, sys
e = {x["name"]: x for x in json.load(open(sys.argv[1]))["functions"]}
d = json.load(open(sys.argv[2]))
assert d["run"]["inline_view"] == "fold"
f = {x["name"]: x for x in d["functions"]}
assert "mix_hot" not in f and not any(x["inlined"] for x in f.values())
want = e["mix_hot"]["self_ns"] + e["mix_cold"]["self_ns"] + e["step"]["self_ns"]
assert f["step"]["self_ns"] == want, (f["step"]["self_ns"], want)
PY

run_cbn report --inline sideways "$T/s"
expect_rc 2
grep -q -- '--inline sideways' "$ERRF" || fail "no error naming the bad --inline value"
exit 0
