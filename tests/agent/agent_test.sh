#!/usr/bin/env bash
# agent_test.sh CASE — runs an example or hostile program with libcbottleneck.so
# preloaded (no launcher: LD_PRELOAD + CBN_SESSION), checks that the program
# behaves as without the agent, and checks the session files with cbpdump.
# Needs CBN_BUILD_DIR.  Exit 0 pass, 1 fail, 77 skip (with the reason).
set -u
B=${CBN_BUILD_DIR:?CBN_BUILD_DIR not set}
AGENT=$B/lib/libcbottleneck.so
DUMP=$B/tests/agent/cbpdump
EX=$B/examples
P=$B/tests/agent/progs
CASE=${1:?usage: agent_test.sh CASE}

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL ($CASE): $*"; exit 1; }
# need_built FILE...: a program or library this build makes is missing: fail,
# never skip (a broken build must not pass as "skipped").
need_built() {
	local f
	for f in "$@"; do
		[ -e "$f" ] || fail "$f is missing: this build should have made it (cmake --build)"
	done
}
need_built "$AGENT" "$DUMP"

T=$(mktemp -d /tmp/cbn-agent-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
S=$T/session
mkdir -p "$S"

# run_both PROG ARGS...: plain run, then agent run; stdout and status must match.
run_both() {
	"$@" >"$T/plain.out" 2>"$T/plain.err"
	PLAIN_RC=$?
	LD_PRELOAD=$AGENT CBN_SESSION=$S "$@" >"$T/agent.out" 2>"$T/agent.err"
	AGENT_RC=$?
	[ "$PLAIN_RC" = "$AGENT_RC" ] || fail "exit status $AGENT_RC with the agent, $PLAIN_RC without"
	cmp -s "$T/plain.out" "$T/agent.out" || {
		diff "$T/plain.out" "$T/agent.out"
		fail "stdout differs with the agent"
	}
	if grep -q "cbottleneck:" "$T/agent.err"; then
		cat "$T/agent.err"
		fail "agent complained on stderr"
	fi
}

# files: the session files, sorted; exactly N expected.
files() {
	ls "$S"/*.cbp 2>/dev/null | sort
}
expect_files() {
	local n
	n=$(files | wc -l)
	[ "$n" = "$1" ] || { ls -l "$S"; fail "expected $1 session file(s), found $n"; }
}

# dump FILE [args]: cbpdump output into $T/dump; damaged files fail.  The
# launcher's side file of the same image (PID.SEQ.cbs), when there is one,
# is dumped after it (its records: what the launcher did from outside).
dump() {
	local f=$1 side
	shift
	"$DUMP" "$@" "$f" >"$T/dump" || { cat "$T/dump"; fail "cbpdump says $f is damaged"; }
	side=${f%.cbp}.cbs
	if [ -f "$side" ]; then
		"$DUMP" "$side" >>"$T/dump" || fail "cbpdump says $side is damaged"
	fi
}

# run_launched OPTIONS -- PROG ARGS: the program under the launcher (what
# the launcher does from outside: --delay, the toggle signal), the session
# kept in $S; stdout and status as plainly.
run_launched() {
	local opts=()
	while [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	"$@" >"$T/plain.out" 2>"$T/plain.err"
	PLAIN_RC=$?
	"$B/cbottleneck" -q --report "$T/report" -o "$S" "${opts[@]}" -- "$@" >"$T/agent.out" \
		2>"$T/agent.err"
	AGENT_RC=$?
	[ "$PLAIN_RC" = "$AGENT_RC" ] || fail "exit status $AGENT_RC with the launcher, $PLAIN_RC without"
	cmp -s "$T/plain.out" "$T/agent.out" || fail "stdout differs with the launcher"
}

# val LINE_PREFIX KEY [MATCH]: value of KEY on the first dump line starting
# with LINE_PREFIX (and containing MATCH).
val() {
	awk -v p="$1" -v k="$2" -v m="${3:-}" '
		index($0, p) == 1 && index($0, m) > 0 {
			for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) { print substr($i, length(k) + 2); exit }
		}' "$T/dump"
}

# ratio_ok A B LO HI: LO <= A/B <= HI (floats).
ratio_ok() {
	awk -v a="$1" -v b="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(b > 0 && a / b >= lo && a / b <= hi) }'
}

nmfile() {
	nm -S --defined-only "$1" >"$T/$(basename "$1").nm" || fail "nm $1"
	echo "$(basename "$1")=$T/$(basename "$1").nm"
}

# Every thread's weight x period must match its CPU time from THREAD_END:
# CPU-time timers fire per period of CPU, so within 25% plus two periods.
check_thread_cpu() {
	local period lo=${1:-0.75}
	period=$(val file period_ns)
	awk -v per="$period" -v lo="$lo" '
		/^thread / {
			for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			if (v["ended"] != 1 || v["cpu_ns"] < 20 * per) next
			est = v["weight"] * per; cpu = v["cpu_ns"]
			if (est < lo * cpu - 2 * per || est > 1.25 * cpu + 2 * per) {
				printf "thread %s (%s): %d samples x period = %.0f ms, CPU %.0f ms\n", v["tid"], v["name"], v["weight"], est / 1e6, cpu / 1e6
				bad = 1
			}
		}
		END { exit bad }' "$T/dump" || { grep -E "^(thread|lost)" "$T/dump"; fail "sample weights do not match thread CPU time"; }
}

case $CASE in
split)
	export CBN_FREQ=250
	run_both "$EX/split" 0.5
	expect_files 1
	dump "$(files)" -m "$(nmfile "$EX/split")"
	[ "$(val file clean_exit)" = 1 ] || fail "clean_exit not set"
	[ "$(val file exit_code)" = 0 ] || fail "exit_code not 0"
	heavy=$(val func self name=heavy)
	light=$(val func self name=light)
	echo "heavy=$heavy light=$light"
	ratio_ok "${heavy:-0}" "${light:-0}" 1.8 5.0 || fail "heavy:light = $heavy:$light, expected about 3:1"
	[ "$(val func total name=main)" -ge $((heavy + light)) ] || fail "main is not on every stack"
	check_thread_cpu
	;;
threads)
	export CBN_FREQ=250
	# CPU-time timers are checked at the scheduler tick; with 5 busy threads on
	# fewer CPUs a thread's last expirations before it exits can go unseen
	# (kernel behaviour, reproduced without the agent).  A short thread can
	# then miss several periods: when a check fails, measure again, longer.
	for scale in 0.6 1.5; do
		rm -f "$S"/*.cbp
		run_both "$EX/threads" "$scale"
		expect_files 1
		dump "$(files)" -m "$(nmfile "$EX/threads")"
		grep -E "^(thread |lost)" "$T/dump"
		ok=1
		for i in 1 2 3 4; do
			w=$(val thread weight "name=worker-$i ")
			[ -n "$w" ] && [ "$w" -gt 0 ] || fail "no samples for worker-$i"
			eval "w$i=$w"
		done
		# worker i burns i units: 4:1 and 2:1 within 25%.
		ratio_ok "$w4" "$w1" 3.0 5.0 && ratio_ok "$w2" "$w1" 1.5 2.5 || ok=0
		[ $ok = 1 ] && (check_thread_cpu) >/dev/null || ok=0
		[ $ok = 1 ] && break
		echo "weights off at SCALE $scale, measuring again"
	done
	[ $ok = 1 ] || fail "worker weights $w1:$w2:$w3:$w4 are not 1:2:3:4 within 25%"
	[ "$(grep -c '^thread .*started=1 ended=1' "$T/dump")" -ge 5 ] || fail "thread start/end events missing"
	[ "$(val func total name=worker_spin)" -gt 0 ] || fail "worker_spin not sampled"
	[ "$(val func total name=main_spin)" -gt 0 ] || fail "main_spin not sampled"
	;;
forkexec)
	run_both "$EX/forkexec" 0.3
	expect_files 3
	parent=$(files | head -1)
	ppid=$(basename "$parent" .0.cbp)
	dump "$parent"
	[ "$(val samples records)" -gt 0 ] || fail "no samples in the parent"
	fork_file=$(files | grep -v "/$ppid\.0\.cbp" | grep '\.0\.cbp$')
	exec_file=$(files | grep '\.1\.cbp$')
	[ -n "$fork_file" ] && [ -n "$exec_file" ] || fail "fork child and exec'd image files missing"
	dump "$fork_file"
	[ "$(val file parent)" = "$ppid" ] || fail "fork child's parent_pid_file is not $ppid"
	dump "$exec_file"
	[ "$(val file exec_seq)" = 1 ] || fail "exec'd image has exec_seq != 1"
	grep -q "^exe path=.*/split$" "$T/dump" || fail "exec'd image is not split"
	[ "$(val samples records)" -gt 0 ] || fail "no samples in the exec'd split"
	[ "$(val file clean_exit)" = 1 ] || fail "split did not exit cleanly"
	;;
dlopen_hot)
	export CBN_FREQ=250
	run_both "$EX/dlopen_hot" 0.4
	expect_files 1
	dump "$(files)" -m "$(nmfile "$EX/libhot.so")"
	grep -q "^module path=.*/libhot.so " "$T/dump" || fail "no MODULE_LOAD for libhot.so"
	grep -q "^unload path=.*/libhot.so " "$T/dump" || fail "no MODULE_UNLOAD for libhot.so"
	hot=$(val func self name=hot_spin)
	all=$(val samples weight)
	ratio_ok "${hot:-0}" "$all" 0.6 1.0 || fail "hot_spin has ${hot:-0} of $all samples, expected most"
	;;
crash | sigkill)
	run_both "$EX/$CASE" 0.3
	[ "$AGENT_RC" -gt 128 ] || fail "$CASE did not die of a signal"
	expect_files 1
	dump "$(files)" -m "$(nmfile "$EX/$CASE")"
	[ "$(val file clean_exit)" = 0 ] || fail "clean_exit set after a $CASE"
	fn=before_crash
	[ "$CASE" = sigkill ] && fn=before_kill
	w=$(val func total "name=$fn ")
	[ -n "$w" ] && [ "$w" -ge 10 ] || fail "samples in $fn lost (${w:-0})"
	;;
recursion)
	# 999 Hz, as the launcher samples: at the agent's own 99 Hz a run takes
	# about 30 samples, and the 10 ms period can beat with the recursion's
	# cycle so that none of them is deeper than 128 (seen under stress-ng).
	# At 999 Hz 0.3 s gives about 290, more than half of them past 128.
	export CBN_FREQ=999
	run_both "$EX/recursion" 0.3
	dump "$(files)"
	[ "$(val samples truncated)" -gt 0 ] || fail "200-deep stacks not flagged truncated at depth 128"
	[ "$(val samples frames_max)" = 128 ] || fail "depth cap 128 not applied: $(grep ^samples "$T/dump")"
	rm -f "$S"/*.cbp
	CBN_DEPTH=256 run_both "$EX/recursion" 0.3
	dump "$(files)"
	[ "$(val file depth)" = 256 ] || fail "CBN_DEPTH=256 not honoured"
	[ "$(val samples truncated)" = 0 ] || fail "stacks truncated at depth 256"
	[ "$(val samples frames_max)" -ge 200 ] || fail "200-deep stacks cut: $(grep ^samples "$T/dump")"
	;;
own_sigprof)
	# The agent chose a real-time signal: SIGPROF is the program's alone.
	export CBN_FREQ=250
	run_both "$P/own_sigprof"
	grep -q "own_sigprof: ok" "$T/agent.out" || fail "the target's own SIGPROF handler lost signals"
	dump "$(files)"
	[ "$(val samples records)" -gt 10 ] || fail "no samples next to the target's own SIGPROF"
	[ "$(val file signo)" != 27 ] || fail "the agent sampled with SIGPROF, which the program uses"
	[ "$(val sampler notes)" = 0 ] || fail "notes set though the program never touched our signal"
	;;
own_signal)
	# Forced onto the program's signal: the program's handler makes the agent
	# move sampling to another signal, and keeps receiving its own.
	export CBN_FREQ=250 CBN_SIGNAL=SIGPROF
	run_both "$P/own_sigprof"
	grep -q "own_sigprof: ok" "$T/agent.out" || fail "the target's own SIGPROF handler lost signals"
	dump "$(files)"
	[ "$(val sampler signo_first)" = 27 ] || fail "CBN_SIGNAL=SIGPROF not honoured"
	[ "$(val file signo)" != 27 ] || fail "sampling did not move off SIGPROF"
	n=$(val sampler notes)
	[ $((n & 1)) = 1 ] || fail "the program's handler on the sampling signal is not noted ($n)"
	[ "$(val samples records)" -gt 10 ] || fail "no samples after the signal moved"
	;;
lockstress)
	# No lock a handler needs can be held by the program: at 10 kHz, with
	# threads in the loader, the allocator, glibc's and libgcc's unwinders
	# and the program's own libunwind, it must finish (the watchdog: 40 s
	# for a run that takes about 2).
	[ "${CBN_HAVE_CXX:-ON}" = ON ] || skip "no C++ compiler at configure time: lockstress not built"
	need_built "$P/lockstress"
	export CBN_FREQ=10000
	for mode in perf timers; do
		[ $mode = timers ] && export CBN_PERF_EVENTS=0
		rm -f "$S"/*.cbp
		timeout -s KILL 40 env LD_PRELOAD=$AGENT CBN_SESSION=$S "$P/lockstress" 0.4 "$P/libthrower.so" \
			>"$T/agent.out" 2>"$T/agent.err"
		rc=$?
		[ $rc = 137 ] && fail "hung with $mode (killed by the 40 s watchdog)"
		[ $rc = 0 ] || { cat "$T/agent.err"; fail "exit status $rc with $mode"; }
		grep -q "never ran" "$T/agent.out" && fail "an activity never ran: $(cat "$T/agent.out")"
		dump "$(files | head -1)"
		# Enough handler runs to have met every activity.  POSIX timers
		# expire on the kernel's tick, not at 10 kHz: for 0.4 s of CPU per
		# thread a run took 430-570 samples with timers at load 9 (perf
		# events: thousands); 200 is still dozens per activity.
		[ "$(val samples records)" -gt 200 ] || fail "only $(val samples records) samples with $mode"
	done
	;;
perf_fallback)
	# Perf events refused (here: turned off) -> POSIX timers, said in the header.
	export CBN_FREQ=250 CBN_PERF_EVENTS=0
	run_both "$EX/threads" 0.3
	dump "$(files)"
	[ "$(val file timer)" = 1 ] || fail "timer kind $(val file timer), expected 1 (POSIX)"
	[ "$(val sampler perf_threads)" = 0 ] || fail "perf events used though CBN_PERF_EVENTS=0"
	[ "$(val sampler timer_threads)" -ge 4 ] || fail "workers not sampled with timers ($(val sampler timer_threads))"
	grep -q "reason=CBN_PERF_EVENTS=0" "$T/dump" || fail "the header does not say why"
	;;
blockall)
	export CBN_FREQ=250
	run_both "$P/blockall"
	grep -q "blockall: ok" "$T/agent.out" || fail "$(cat "$T/agent.out")"
	dump "$(files)"
	n=$(awk '/^thread / && !/samples=0 /' "$T/dump" | wc -l)
	[ "$n" -ge 4 ] || fail "only $n threads sampled; workers that block all signals must be sampled"
	# 4 busy threads on few CPUs: the tick-driven timers may miss a thread's
	# last periods (see threads), so only a loose lower bound here.
	check_thread_cpu 0.5
	;;
sleeper)
	export CBN_FREQ=1000
	run_both "$P/sleeper"
	grep -q "sleeper: ok" "$T/agent.out" || fail "$(cat "$T/agent.out")"
	;;
cxx)
	[ "${CBN_HAVE_CXX:-ON}" = ON ] || skip "no C++ compiler at configure time: libthrower.so not built"
	need_built "$P/libthrower.so"
	export CBN_FREQ=1000
	run_both "$P/cxx_host" "$P/libthrower.so"
	LD_DEBUG=bindings LD_PRELOAD=$AGENT CBN_SESSION=$S "$P/cxx_host" "$P/libthrower.so" >/dev/null 2>"$T/bind"
	# libunwind's own internal references aside, nobody may bind to its copy.
	if grep "_Unwind_RaiseException" "$T/bind" | grep -v "binding file [^ ]*libunwind" | grep -q "to [^ ]*libunwind"; then
		fail "C++ exceptions bound to libunwind: $(grep _Unwind_RaiseException "$T/bind" | head -1)"
	fi
	grep "_Unwind_RaiseException" "$T/bind" | grep -q "binding file [^ ]*libstdc++[^ ]* .* to [^ ]*libgcc_s" ||
		fail "libstdc++ does not bind _Unwind_RaiseException to libgcc_s"
	;;
selfexec)
	run_both "$P/selfexec" 2
	expect_files 3
	for seq in 0 1 2; do
		f=$(files | grep "\.$seq\.cbp$")
		[ -n "$f" ] || fail "no file for exec_seq $seq"
		dump "$f"
		[ "$(val file exec_seq)" = "$seq" ] || fail "$f has the wrong exec_seq"
	done
	[ "$(val file clean_exit)" = 1 ] || fail "last image did not exit cleanly"
	# Each image burns 50 ms; the thread CPU clock runs on across exec, and
	# THREAD_END must report this image's share, not all three images'.
	cpu=$(val thread cpu_ns)
	[ "$cpu" -gt 30000000 ] && [ "$cpu" -lt 100000000 ] || fail "last image's thread CPU $cpu ns, expected ~50 ms"
	;;
daemon)
	LD_PRELOAD=$AGENT CBN_SESSION=$S "$P/daemon" "$T/daemon.out" || fail "daemon parent failed"
	for _ in $(seq 50); do
		[ -f "$T/daemon.out" ] && break
		sleep 0.1
	done
	grep -q "daemon: ok" "$T/daemon.out" 2>/dev/null || fail "the daemon's output never arrived"
	sleep 0.2
	expect_files 3
	found=0
	for f in $(files); do
		dump "$f"
		if [ "$(val samples records)" -gt 0 ] && [ "$(val file parent)" != -1 ]; then found=1; fi
	done
	[ $found = 1 ] || fail "the grandchild's samples are missing"
	;;
runpath)
	run_both "$P/dlopen_runpath"
	grep -q "dlopen_runpath: ok" "$T/agent.out" || fail "dlopen through DT_RUNPATH broke"
	;;
ranges)
	run_both "$EX/ranges" 0.3 5
	dump "$(files)"
	[ "$(grep -c '^range kind=1 source=1 depth=0 .*name=step$' "$T/dump")" = 5 ] || fail "step ranges"
	[ "$(grep -c '^range kind=1 source=1 depth=1 .*name=load$' "$T/dump")" = 5 ] || fail "load ranges"
	[ "$(grep -c '^range kind=1 source=1 depth=1 .*name=compute$' "$T/dump")" = 5 ] || fail "compute ranges"
	[ "$(grep -c '^range kind=4 source=1 ' "$T/dump")" = 5 ] || fail "steps"
	# compute burns twice load's CPU: the ranges' durations say so.
	load=$(awk '/name=load$/ { for (i = 1; i <= NF; i++) if ($i ~ /^dur_ns=/) s += substr($i, 8) } END { print s }' "$T/dump")
	comp=$(awk '/name=compute$/ { for (i = 1; i <= NF; i++) if ($i ~ /^dur_ns=/) s += substr($i, 8) } END { print s }' "$T/dump")
	ratio_ok "$comp" "$load" 1.4 2.8 || fail "compute:load durations $comp:$load, expected about 2:1"
	;;
annotate)
	run_both "$P/annotate"
	dump "$(files)"
	[ "$(val file exit_code)" = 3 ] || fail "exit code 3 not recorded"
	[ "$(grep -c '^range kind=1 source=1 depth=1 .*name=batch' "$T/dump")" = 3 ] || fail "batch ranges"
	[ "$(grep -c '^range kind=1 source=1 depth=0 .*name=epoch' "$T/dump")" = 3 ] || fail "epoch ranges"
	[ "$(grep -c '^range kind=4 source=1 ' "$T/dump")" = 3 ] || fail "steps"
	grep -q '^range kind=3 source=1 .*name=done' "$T/dump" || fail "mark"
	;;
capture_api)
	# --capture-range api: recording only between cbn_start and cbn_stop.
	# Threads created before the window start parked and are woken by it;
	# after it each thread parks at its next sample and takes no more
	# signals (parks counts the signals taken outside windows).
	export CBN_FREQ=1000 CBN_CAPTURE_RANGE=api
	run_both "$P/capture_app" api 2 300
	dump "$(files)"
	grep -E "^(capture|samples)" "$T/dump"
	[ "$(val capture mode)" = 1 ] || fail "header.capture.mode not CONTROLLED"
	[ "$(val capture windows)" = 1 ] || fail "expected one window"
	[ "$(val capture spec)" = capture_range=api ] || fail "spec: $(val capture spec)"
	grep -q '^capture_rec event=1 cause=2 ' "$T/dump" || fail "no OPEN record from cbn_start"
	grep -q '^capture_rec event=2 cause=2 ' "$T/dump" || fail "no CLOSE record from cbn_stop"
	[ "$(val capture samples_outside)" = 0 ] || fail "samples outside the window"
	[ "$(val samples records)" -ge 20 ] || fail "too few samples in the window"
	# 3 busy threads x 600 ms outside the window at 1 kHz: up to 1800 signals
	# if the samplers kept running; parked, one per 10 ms of a thread's CPU
	# (AGENT_PARK_NS): about 180.
	[ "$(val capture parks)" -le 300 ] || fail "$(val capture parks) signals outside the window: samplers not parked"
	# Every thread resumed in the window (at its first park-period signal).
	[ "$(grep -c '^thread .*name=cap-worker samples=[1-9]' "$T/dump")" = 2 ] ||
		fail "a worker thread took no sample in the window"
	;;
capture_schedule)
	# torch's schedule on cbn_step(): steps 2,3 and 6,7 of 10 recorded (step n
	# starts at the n-th call; step 0 is the time before the first).
	export CBN_FREQ=1000 CBN_SCHEDULE=wait=1,warmup=1,active=2,repeat=2
	run_both "$P/capture_app" steps 1 10 40
	dump "$(files)"
	grep -E "^(capture|samples)" "$T/dump"
	[ "$(val capture windows)" = 2 ] || fail "expected two windows"
	[ "$(val capture steps)" = 10 ] || fail "steps counted: $(val capture steps)"
	[ "$(grep -c '^capture_rec event=1 cause=3 ' "$T/dump")" = 2 ] || fail "OPEN records"
	[ "$(grep -c '^capture_rec event=2 cause=3 ' "$T/dump")" = 2 ] || fail "CLOSE records"
	[ "$(val capture samples_outside)" = 0 ] || fail "samples outside the windows"
	# Step markers: the ones inside the windows and the ones that close them.
	[ "$(grep -c '^range kind=4 ' "$T/dump")" -le 6 ] || fail "step markers outside windows"
	[ "$(val samples records)" -ge 10 ] || fail "too few samples in the windows"
	# 2 threads x 6 steps of 40 ms outside the windows: 48 park-period
	# signals (480 if the samplers kept running).
	[ "$(val capture parks)" -le 100 ] || fail "samplers not parked between windows"
	# Samples in each window, and the worker woken in them (it parks in
	# between): both threads sampled in at least one window, to allow for a
	# thread that got no full period of CPU in 80 ms on a loaded machine.
	[ "$(grep -c '^window idx=[01] .* samples=[1-9]' "$T/dump")" = 2 ] ||
		fail "a window without samples: $(grep '^window ' "$T/dump")"
	grep -q '^window idx=[01] .* threads=2$' "$T/dump" ||
		fail "the worker was not sampled in any window: $(grep '^window ' "$T/dump")"
	;;
capture_time)
	# --delay 200ms --duration 200ms on a 600 ms run: the launcher turns
	# the time gate (src/monitor/mon_capture.c).
	run_launched -F 1000 --delay 200ms --duration 200ms -- "$P/capture_app" idle 1 600
	dump "$(files)"
	grep -E "^(capture|samples)" "$T/dump"
	[ "$(val capture windows)" = 1 ] || fail "expected one window"
	o=$(val capture_rec ts 'event=1 cause=4')
	c=$(val capture_rec ts 'event=2 cause=5')
	[ -n "$o" ] && [ -n "$c" ] || fail "no DELAY open / DURATION close"
	ratio_ok $((c - o)) 200000000 0.95 1.25 || fail "window of $(((c - o) / 1000000)) ms, expected 200"
	[ "$(val capture samples_outside)" = 0 ] || fail "samples outside the window"
	[ "$(val samples records)" -ge 10 ] || fail "too few samples in the window"
	# one thread spinning 400 ms outside the window: about 40 park-period
	# signals (400 if the sampler kept running)
	[ "$(val capture parks)" -le 80 ] || fail "samplers not parked"
	;;
capture_toggle)
	# The toggle signal: recording from start, off at the first SIGUSR2, on at
	# the second (the program raises it only with the agent present; the
	# agent's handler counts it, the launcher flips the gate).
	"$B/cbottleneck" -q --report "$T/report" -o "$S" -F 1000 --toggle-signal SIGUSR2 -- \
		"$P/capture_app" toggle 1 200 >"$T/agent.out" 2>&1 ||
		fail "capture_app died: $(cat "$T/agent.out")"
	dump "$(files)"
	grep -E "^(capture|samples)" "$T/dump"
	[ "$(val capture spec)" = toggle_signal=SIGUSR2 ] || fail "spec: $(val capture spec)"
	[ "$(val capture windows)" = 2 ] || fail "expected two windows"
	grep -q '^capture_rec event=2 cause=9 ' "$T/dump" || fail "no CLOSE by the signal"
	grep -q '^capture_rec event=1 cause=9 ' "$T/dump" || fail "no OPEN by the signal"
	[ "$(val capture samples_outside)" = 0 ] || fail "samples outside the windows"
	# A program that installs its own handler later wins the signal, and
	# the header says so.
	rm -f "$S"/*.cbp "$S"/*.cbs
	export CBN_TOGGLE_SIGNAL=SIGUSR2
	run_both "$P/capture_app" ownsig 1 100
	grep -q "ownsig: 1 hit" "$T/agent.out" || fail "the program's handler did not get SIGUSR2"
	dump "$(files)"
	grep -q '^capture .*spec=toggle_signal=SIGUSR2 toggle_signal_taken_by_program' "$T/dump" ||
		fail "the header does not say the program took the signal: $(grep '^capture ' "$T/dump")"
	[ "$(val capture windows)" = 1 ] || fail "the program's signal toggled recording"
	;;
capture_nvtx)
	# --capture-range nvtx:inner: only what happens while "inner" is open
	# is recorded (inner itself, the mark inside it); NVTX ranges and marks
	# named by --step count steps.
	[ "${CBN_AGENT_NVTX:-ON}" = ON ] || skip "agent built without the nvtx3 headers (no CUDA toolkit)"
	need_built "$P/nvtx_app"
	export NVTX_INJECTION64_PATH=$AGENT CBN_CAPTURE_RANGE=nvtx:inner CBN_STEP='^(outer|dom-mark)$'
	LD_PRELOAD=$AGENT CBN_SESSION=$S "$P/nvtx_app" >"$T/agent.out" || fail "nvtx_app failed"
	grep -q "depths 0 1" "$T/agent.out" || fail "NVTX push did not reach the agent: $(cat "$T/agent.out")"
	dump "$(files)"
	grep -E "^(capture|range)" "$T/dump"
	[ "$(val capture windows)" = 1 ] || fail "expected one window"
	grep -q '^capture_rec event=1 cause=6 ' "$T/dump" || fail "no OPEN by the NVTX range"
	grep -q '^capture_rec event=2 cause=6 ' "$T/dump" || fail "no CLOSE by the NVTX range"
	grep -q '^range kind=1 source=2 .*name=inner' "$T/dump" || fail "inner not recorded"
	grep -q '^range kind=3 source=2 .*name=hello-mark' "$T/dump" || fail "the mark inside inner not recorded"
	grep -q 'name=outer' "$T/dump" && fail "outer (closed outside the window) recorded"
	grep -q 'name=cross-thread' "$T/dump" && fail "a range outside the window recorded"
	[ "$(val capture steps)" = 2 ] || fail "NVTX step range and mark: $(val capture steps) steps, expected 2"
	;;
nvtx)
	[ "${CBN_AGENT_NVTX:-ON}" = ON ] || skip "agent built without the nvtx3 headers (no CUDA toolkit)"
	need_built "$P/nvtx_app"
	export NVTX_INJECTION64_PATH=$AGENT
	LD_PRELOAD=$AGENT CBN_SESSION=$S "$P/nvtx_app" >"$T/agent.out" || fail "nvtx_app failed"
	grep -q "depths 0 1" "$T/agent.out" || fail "NVTX push did not reach the agent: $(cat "$T/agent.out")"
	dump "$(files)"
	grep -q '^range kind=1 source=2 depth=0 .*domain= name=outer' "$T/dump" || fail "outer"
	grep -q '^range kind=1 source=2 depth=1 .*domain= name=inner' "$T/dump" || fail "inner"
	grep -q '^range kind=3 source=2 .*name=hello-mark' "$T/dump" || fail "mark"
	grep -q '^range kind=2 source=2 .*name=cross-thread' "$T/dump" || fail "start/end"
	grep -q '^range kind=1 source=2 .*domain=mydomain name=registered-name' "$T/dump" || fail "domain push"
	grep -q '^range kind=3 source=2 .*domain=mydomain name=dom-mark' "$T/dump" || fail "domain mark"
	;;
single)
	# No helper thread in a single-threaded target; the handler grows the file.
	# Its stacks, 245 frames deep in one loop, are written shared with the
	# sample before (cbpdump puts them back whole); written whole
	# (CBN_SHARE_STACKS=0) they fill more than 512 KiB, which the handler
	# grows the file for.
	export CBN_FREQ=250 CBN_DEPTH=256
	run_both "$P/single"
	grep -q "Threads:[[:space:]]*1$" "$T/agent.out" || fail "the agent made the target multi-threaded: $(cat "$T/agent.out")"
	dump "$(files)"
	grep -E "^(file|samples|lost)" "$T/dump"
	[ "$(val samples frames_max)" -ge 240 ] || fail "shared deep stacks cut"
	[ "$(val samples frames_avg | cut -d. -f1)" -ge 240 ] || fail "shared deep stacks not whole"
	[ "$(val samples shared)" -ge $(($(val samples records) / 2)) ] || fail "few stacks shared"
	[ "$(val file file_size)" -lt $((512 * 1024)) ] || fail "shared stacks took as much room as whole ones"
	rm -f "$S"/*
	CBN_SHARE_STACKS=0 run_both "$P/single"
	dump "$(files)"
	grep -E "^(file|samples|lost)" "$T/dump"
	[ "$(val samples shared)" = 0 ] || fail "stacks shared with CBN_SHARE_STACKS=0"
	[ "$(val file file_size)" -gt $((512 * 1024)) ] || fail "the file did not grow"
	[ "$(val lost buffer_full)" = 0 ] || fail "samples lost for lack of space"
	[ "$(val samples frames_max)" -ge 240 ] || fail "deep stacks cut"
	;;
jitmap)
	# Executable memory outside the modules is a JIT_REGION record; GONE
	# when unmapped or no longer executable; a fork child's file holds the
	# regions it inherited, and the file ranges (a CODE_FILE with the path
	# and offset, from the child's /proc/self/maps); a jitdump mapping is
	# named; no region for the program's own text; errno of failing calls
	# kept (the program checks).
	export CBN_FREQ=250
	run_both "$P/jitmap"
	grep -q "jitmap: ok" "$T/agent.out" || fail "$(cat "$T/agent.out")"
	read -r A B C < <(sed -n 's/^A=\(0x[0-9a-f]*\) B=\(0x[0-9a-f]*\) C=\(0x[0-9a-f]*\)$/\1 \2 \3/p' "$T/agent.err")
	[ -n "${C:-}" ] || fail "no addresses: $(cat "$T/agent.err")"
	read -r E EXE < <(sed -n 's/^E=\(0x[0-9a-f]*\) \(.*\)$/\1 \2/p' "$T/agent.err")
	[ -n "${EXE:-}" ] || fail "no E: $(cat "$T/agent.err")"
	pg=$(getconf PAGESIZE)
	expect_files 2
	for f in $(files); do
		dump "$f"
		grep -q "^jit start=$B len=$pg .*flags=0 " "$T/dump" || fail "B not in $f: $(grep '^jit' "$T/dump")"
		e=$(grep "^codefile start=$E len=$pg off=$pg tid=[0-9]* name=" "$T/dump" | sed 's/.* name=//')
		[ "$e" = "$EXE" ] || fail "E not once in $f: $(grep '^codefile' "$T/dump")"
		cp "$T/dump" "$T/dump.$(basename "$f")"
	done
	# the parent's file: the one with A
	d=$(grep -l "^jit start=$A len=$((2 * pg)) .*flags=0 " "$T"/dump.*) || fail "no region A"
	grep -q "^jit start=$A len=$((2 * pg)) .*flags=1 " "$d" || fail "A unmapped, no GONE: $(grep '^jit' "$d")"
	grep -q "^jit start=$C len=$pg .*flags=0 " "$d" || fail "no region C: $(grep '^jit' "$d")"
	grep -q "^jit start=$C len=$pg .*flags=1 " "$d" || fail "C made RW, no GONE: $(grep '^jit' "$d")"
	grep -q "^jit .*flags=2 name=/tmp/jit-[0-9]*\.dump$" "$d" || fail "no jitdump: $(grep '^jit' "$d")"
	n=$(grep -c '^jit ' "$d")
	[ "$n" = 6 ] || fail "$n regions in the parent's file, expected 6 (A, B, C, A gone, C gone, the dump): $(grep '^jit' "$d")"
	;;
legacy_sig)
	export CBN_FREQ=250
	# A SysV handler is SIG_DFL from its entry until it re-installs itself:
	# a SIGPROF in that window kills the program, with or without us (seen
	# once plainly in CI, at load 5).  A pair of runs where either was
	# killed so is run again, at most 3 times.
	for try in 1 2 3; do
		"$P/legacy_sig" >"$T/plain.out" 2>"$T/plain.err"
		PLAIN_RC=$?
		LD_PRELOAD=$AGENT CBN_SESSION=$S "$P/legacy_sig" >"$T/agent.out" 2>"$T/agent.err"
		AGENT_RC=$?
		[ "$PLAIN_RC" = 155 ] || [ "$AGENT_RC" = 155 ] || break
		[ "$try" = 3 ] && fail "killed by SIGPROF 3 times (plain $PLAIN_RC, with the agent $AGENT_RC)"
		rm -f "$S"/*.cbp
	done
	[ "$PLAIN_RC" = "$AGENT_RC" ] || fail "exit status $AGENT_RC with the agent, $PLAIN_RC without"
	cmp -s "$T/plain.out" "$T/agent.out" || fail "stdout differs with the agent"
	grep -q "cbottleneck:" "$T/agent.err" && fail "agent complained on stderr: $(cat "$T/agent.err")"
	grep -q "legacy_sig: ok" "$T/agent.out" || fail "$(cat "$T/agent.out")"
	nm -D "$P/legacy_sig" | grep -q __sysv_signal || skip "signal() did not compile to __sysv_signal here"
	;;
exec_inherit)
	run_both "$P/exec_inherit" x
	grep -q "blocked=1 ignored=1" "$T/agent.out" || fail "$(cat "$T/agent.out")"
	expect_files 2
	;;
dlopen_kill)
	# A library dlopened 60 ms before a SIGKILL: its LOAD must be on disk.
	need_built "$EX/libhot.so"
	export CBN_FREQ=250
	run_both "$P/dlopen_kill" "$EX/libhot.so"
	dump "$(files)" -m "$(nmfile "$EX/libhot.so")"
	grep -q "^module path=.*/libhot.so " "$T/dump" || fail "no MODULE_LOAD for libhot.so before the SIGKILL"
	[ "$(val func self name=hot_spin)" -gt 0 ] || fail "no samples resolved in hot_spin"
	;;
forkstress)
	# Children of a parent whose threads hold the loader lock, libunwind's
	# locks and ours at fork time must not hang.
	export CBN_FREQ=1000
	run_both timeout 60 "$P/forkstress"
	grep -q "forkstress: ok" "$T/agent.out" || fail "$(cat "$T/agent.out")"
	[ "$(files | wc -l)" -ge 61 ] || fail "fork children files missing: $(files | wc -l)"
	;;
nosession)
	# Without CBN_SESSION the agent stays inert: no file, no message, same output.
	LD_PRELOAD=$AGENT "$EX/split" 0.05 >"$T/out" 2>"$T/err" || fail "split failed"
	[ ! -s "$T/err" ] || fail "agent printed without a session: $(cat "$T/err")"
	# An unwritable session: nothing on the program's stderr (there is
	# nowhere to say it), the program runs on.
	LD_PRELOAD=$AGENT CBN_SESSION=/nonexistent/dir "$EX/split" 0.05 >"$T/out" 2>"$T/err" || fail "split failed with a bad session"
	grep -q "split: done" "$T/out" || fail "split output lost"
	[ ! -s "$T/err" ] || fail "the agent wrote on the program's stderr: $(cat "$T/err")"
	# Loaded by NVTX's dlopen but not preloaded: inert, NVTX stays a no-op,
	# and the session's notes (not the program's stderr) say so.
	if [ -x "$P/nvtx_app" ]; then
		CBN_SESSION=$S NVTX_INJECTION64_PATH=$AGENT "$P/nvtx_app" >"$T/out" 2>"$T/err" || fail "nvtx_app failed"
		[ ! -s "$T/err" ] || fail "the agent wrote on the program's stderr: $(cat "$T/err")"
		grep -q "depths -2 -2" "$T/out" || fail "agent active without LD_PRELOAD: $(cat "$T/out")"
		[ -z "$(files)" ] || fail "a session file was written without LD_PRELOAD"
		grep -Eq "^pid [0-9]+	not profiled: the agent was loaded without LD_PRELOAD \(.*nvtx_app\)$" "$S/notes" ||
			fail "no note in the session: $(cat "$S/notes" 2>&1)"
	fi
	;;
*)
	echo "unknown case $CASE"
	exit 2
	;;
esac
echo "PASS ($CASE)"
