#!/bin/bash
# attach_untouched — attaching leaves the process as it was, and sees what a
# launched run sees (docs/attach.md):
#   1. a program that looks at itself every 20 ms (its threads, descriptors,
#      tracer, pending, blocked, ignored and caught signals, /proc/self/status)
#      sees nothing change before, during and after `cbottleneck --pid` and
#      `cbottleneck dump`;
#   2. examples/split (heavy:light 3:1 all through the run) gives the same
#      shares attached as launched, within 8 points.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example split
. "$(dirname "$0")/lib/attach.bash"

cat >"$T/self.py" <<'PY'
import os, sys, time
KEYS = ("Threads", "TracerPid", "SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt", "NoNewPrivs",
        "Seccomp")
def look():
    st = {}
    with open("/proc/self/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in KEYS:
                st[k] = v.strip()
    st["fds"] = sorted(os.listdir("/proc/self/fd"))
    return st
first = look()
print("ready", flush=True)
end = time.monotonic() + float(sys.argv[1])
n = 0
while time.monotonic() < end:
    x = 0
    for i in range(20000):
        x += i
    now = look()
    if now != first:
        print("changed:", {k: (first[k], now[k]) for k in first if first[k] != now[k]}, flush=True)
        sys.exit(1)
    n += 1
print("unchanged after", n, "looks", flush=True)
PY
python3 "$T/self.py" 6 >"$T/self.out" 2>&1 &
prog=$!
for _ in $(seq 100); do grep -q ready "$T/self.out" && break; sleep 0.1; done
sleep 0.5
run_cbn --duration 1.5 --pid "$prog"
expect_rc 0
OUTF=$T/dump.out ERRF=$T/dump.err
"$CBN" dump "$prog" >"$OUTF" 2>"$ERRF" || fail "dump of the self-checking program failed"
rc=0
wait "$prog" || rc=$?
[ "$rc" = 0 ] || fail "the program saw itself change: $(cat "$T/self.out")"
grep -q '^unchanged after [0-9]* looks' "$T/self.out" || fail "no verdict from the program: $(cat "$T/self.out")"

# The same shares attached as launched.
# heavy_share FILE: heavy's share of heavy + light, in percent.
heavy_share()
{
	local h l
	h=$(json_func_field "$1" heavy self_samples)
	l=$(json_func_field "$1" light self_samples)
	echo $((100 * h / (h + l > 0 ? h + l : 1)))
}
run_cbn --json "$T/launched.json" -- "$EXAMPLES/split" 1.5
expect_rc 0
attach_to 0.3 --duration 1.5 --json "$T/attached.json" -- "$EXAMPLES/split" 30
expect_rc 0
launched=$(heavy_share "$T/launched.json")
attached=$(heavy_share "$T/attached.json")
note "heavy's share of heavy+light: launched $launched %, attached $attached %"
within "$attached" "$launched" 8 || fail "heavy: $attached % attached, $launched % launched"
within "$attached" 75 10 || fail "heavy: $attached % attached, expected about 75 %"
exit 0
