#!/bin/bash
# steps_schedule — --schedule as torch.profiler.schedule does it, on a loop
# that marks the end of each of its 12 iterations as torch's prof.step() does
# (examples/step_cold SCALE end: iteration i is step i, ProfilerStep#i):
# wait=2,warmup=1,active=4 records steps 3-6 and, the cycle repeating, 10-11,
# the run ending inside that second active window, which is kept (closed by
# the exit); repeat=1 stops after 3-6; skip_first=2 moves the cycle by two.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example step_cold

# steps SCHEDULE EXPECTED WINDOWS: the recorded steps (a step 12, the few
# instructions after the loop, is kept too when it drew a sample) and the
# windows' first steps and close causes
steps()
{
	run_cbn -q --schedule "$1" --json "$T/s.json" -- "$EXAMPLES/step_cold" 0.2 end
	expect_rc 0
	python3 - "$T/s.json" "$2" "$3" <<'PY' || fail "--schedule $1: steps"
import json, sys
s = json.load(open(sys.argv[1]))["steps"]
want = [int(x) for x in sys.argv[2].split()]
nums = [x["number"] for x in s["steps"]]
if nums[-1:] == [12] and want[-1:] == [11]:
    nums = nums[:-1]   # the tail after the loop, in the last active window
assert nums == want, (nums, want)
wins = ["%d/%s" % (w["first_step"], w["close_cause"]) for w in s["capture"]["windows"]]
assert wins == sys.argv[3].split(), (wins, sys.argv[3])
PY
}

steps wait=2,warmup=1,active=4 "3 4 5 6 10 11" "3/schedule 10/exit"
steps wait=2,warmup=1,active=4,repeat=1 "3 4 5 6" "3/schedule"
steps skip_first=2,wait=2,warmup=1,active=4,repeat=1 "5 6 7 8" "5/schedule"
exit 0
