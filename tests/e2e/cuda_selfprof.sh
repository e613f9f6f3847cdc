#!/bin/bash
# cuda_selfprof — a program that profiles itself with its own CUPTI client
# (tests/cuda/selfprof.c: subscribe, buffers, CONCURRENT_KERNEL around phase 2,
# like torch.profiler's Kineto) gets exactly what it gets without cbottleneck:
# the same stdout, byte for byte (its profiler saw 11 of 11 kernels and 11
# launch callbacks, on its own clock when it registers one).  cbottleneck
# steps aside while the program holds CUPTI and takes over again when it lets
# go: its report has phase 1's 7 and phase 3's 13 kernels (none of phase 2's),
# API calls back only once the program unsubscribed or finalized, and names
# the program's client and the spans it held, in the text and the JSON.
. "$(dirname "$0")/lib/common.bash"
need_fakecupti cuda_selfprof
P="$CBN_BUILD_DIR/tests/cuda/cuda_selfprof"
# The layer takes the buffers back 100 ms after the program let go (its
# flusher looks every 50 ms): well inside the program's 300 ms pause.
export CBN_CUDA_FLUSH_PERIOD_MS=50 CBN_CUDA_RESUME_MS=100

for args in "keep" "release" "finalize" "keep clock" "release clock"; do
	tag=${args// /-}
	# shellcheck disable=SC2086
	"$P" $args >"$T/$tag.plain" 2>&1 || fail "[$tag] the plain run failed: $(cat "$T/$tag.plain")"
	grep -q "its profiler saw 11 of 11 kernels, 0 other records, 11 launch callbacks" "$T/$tag.plain" ||
		fail "[$tag] the plain run's own profiler: $(head -1 "$T/$tag.plain")"
	# shellcheck disable=SC2086
	"$CBN" --report "$T/$tag.txt" --json "$T/$tag.json" --trace "$T/$tag.trace" -- "$P" $args \
		>"$T/$tag.prof" 2>"$T/$tag.err" || fail "[$tag] exit status $?: $(cat "$T/$tag.err")"
	cmp "$T/$tag.plain" "$T/$tag.prof" ||
		fail "[$tag] the program's own profiler saw something else under cbottleneck: $(cat "$T/$tag.prof")"
	[ -s "$T/$tag.err" ] && fail "[$tag] bytes on the program's stderr: $(cat "$T/$tag.err")"
	grep -q "the program's own CUPTI client (cuda_selfprof) held the GPU activity records" "$T/$tag.txt" ||
		fail "[$tag] the report does not name the program's client: $(grep '^CUDA' "$T/$tag.txt")"
	python3 - "$T/$tag.json" "$T/$tag.trace" "$args" <<'PY' || fail "[$tag] what cbottleneck recorded"
import json, sys
d = json.load(open(sys.argv[1])); mode = sys.argv[3].split()
c = d["cuda"]
k = {r["name"]: r["instances"] for r in c["kernels"]}
assert k == {"before()": 7, "after()": 13}, k
sh = {s["what"]: s for s in c["shared"]}
assert set(sh) == {"api", "activity"}, c["shared"]
assert all(s["holder"] == "cuda_selfprof" for s in sh.values()), c["shared"]
act, api = sh["activity"], sh["api"]
assert act["end_ns"] is not None and act["end_ns"] > act["start_ns"], act
if mode[0] == "keep":
    # the program keeps its subscription: API calls of phase 1 only
    assert api["end_ns"] is None, api
    assert c["totals"]["api_calls"] == 8, c["totals"]
    assert "activity records only" in act["note"], act
else:
    assert api["end_ns"] is not None and api["end_ns"] >= api["start_ns"], api
    assert c["totals"]["api_calls"] == 22, c["totals"]
if "clock" in mode and mode[0] != "keep":
    # CUPTI's clock was the program's (3 ticks per ns): every phase-3 kernel
    # still starts after its launch on ours, within 50 ms
    ev = json.load(open(sys.argv[2]))["traceEvents"]
    launch = {e["args"]["correlation"]: e for e in ev
              if e.get("cat") == "cuda_runtime" and e["name"] == "cudaLaunchKernel"}
    n = 0
    for e in ev:
        if e.get("cat") == "kernel" and e["name"] == "after()":
            l = launch[e["args"]["correlation"]]
            assert l["ts"] - 1 <= e["ts"] <= l["ts"] + 50000, (l, e)
            assert 19.0 <= e["dur"] <= 21.0, e
            n += 1
    assert n == 13, n
print("# %s: kernels %s, shared %s" % (" ".join(mode), k, [(s["what"], s["start_ns"], s["end_ns"]) for s in c["shared"]]), file=sys.stderr)
PY
done
exit 0
