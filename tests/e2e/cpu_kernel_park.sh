#!/bin/bash
# cpu_kernel_park — a thread's kernel-stack event closes while the thread stays
# in user mode and opens again when it makes system calls (docs/agent.md,
# "Kernel stacks"): examples/kphases runs 0.3 s of pure user code, then 0.2 s
# of reads of /dev/zero, three times.  Where the kernel allows kernel stacks:
#  - the event is parked at least twice and resumed at least twice;
#  - user_phase keeps at least 90 % of its time as its own (the kernel event
#    once fired in step with the sampler's own signal and made a spinning
#    thread read mostly kernel);
#  - named kernel frames hold at least half of read_phase's time, so the
#    event was open again in the later read phases (parked, their kernel time
#    would be one unnamed [kernel] frame);
# and with CBN_KERNEL_STACKS=always nothing is parked and user_phase is still
# its own.  Scale 1 whatever SCALE says: a user phase must outlast the 100 ms
# window the agent judges over.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example kphases
need_python_jsonschema

check_run()   # JSON FOLDED: prints "parks unparks user_self_share read_named_share"
{
	python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ks = d["run"]["sampler"]["kernel_stacks"]
user_tot = user_self = read_tot = read_named = 0
for line in open(sys.argv[2]):
    stack, w = line.rsplit(" ", 1)
    w = int(w)
    frames = stack.split(";")
    if "user_phase" in frames:
        user_tot += w
        if frames[-1] == "user_phase":
            user_self += w
    if "read_phase" in frames:
        read_tot += w
        # a named kernel frame ("[kernel] NAME" is written "[kernel]_NAME")
        if any(f.startswith("[kernel]_") for f in frames):
            read_named += w
print(ks.get("parks", 0), ks.get("unparks", 0), user_self / max(user_tot, 1), read_named / max(read_tot, 1))
PY
}

run_cbn -v -F 999 --json "$T/r.json" --folded "$T/r.folded" -- "$EXAMPLES/kphases" 1
expect_rc 0
grep -q '^kphases: done$' "$OUTF" || fail "the target's own output is missing from stdout"
validate_schema "$T/r.json"
state=$(json_get "$T/r.json" run.sampler.kernel_stacks.state)
if [ "$state" != taken ]; then
	skip "no kernel stacks on this machine ($(json_get "$T/r.json" run.sampler.kernel_stacks.reason))"
fi
read -r parks unparks uself rnamed < <(check_run "$T/r.json" "$T/r.folded")
note "parked $parks, resumed $unparks; user_phase self share $uself; named kernel share of read_phase $rnamed"
[ "$parks" -ge 2 ] || fail "the kernel event was parked $parks times over three user phases, expected at least 2"
[ "$unparks" -ge 2 ] || fail "the kernel event was resumed $unparks times over three read phases, expected at least 2"
grep_out "the kernel event paused $parks times on threads staying in user mode, resumed $unparks\$"
python3 -c "import sys; sys.exit(0 if $uself >= 0.9 else 1)" || fail "user_phase keeps only $uself of its time as its own"
python3 -c "import sys; sys.exit(0 if $rnamed >= 0.5 else 1)" || fail "named kernel frames hold only $rnamed of read_phase"

CBN_KERNEL_STACKS=always run_cbn -v -F 999 --json "$T/a.json" --folded "$T/a.folded" -- "$EXAMPLES/kphases" 1
expect_rc 0
validate_schema "$T/a.json"
read -r parks unparks uself rnamed < <(check_run "$T/a.json" "$T/a.folded")
note "always: parked $parks, resumed $unparks; user_phase self share $uself; named kernel share of read_phase $rnamed"
[ "$parks" = 0 ] || fail "CBN_KERNEL_STACKS=always parked the kernel event $parks times"
python3 -c "import sys; sys.exit(0 if $uself >= 0.9 and $rnamed >= 0.5 else 1)" ||
	fail "CBN_KERNEL_STACKS=always: user_phase own $uself, read_phase named kernel $rnamed"
exit 0
