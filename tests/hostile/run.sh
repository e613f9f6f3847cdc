#!/usr/bin/env bash
# run.sh NAME [ARGS...] — runs the hostile program NAME twice, plainly and under
# cbottleneck, each in its own fresh empty working directory and TMPDIR, and
# compares what the program did: exit status, stdout, stderr (minus the
# launcher's "cbottleneck: " lines), the files left in its working directory,
# and its TMPDIR.  The programs print their own view of their fds, threads and
# signals, so the stdout comparison covers those.  Then checks the report.
#
# Environment: CBN_BUILD_DIR (required), CBN (default $CBN_BUILD_DIR/cbottleneck),
# HOSTILE_FREQ (-F, default 999), HOSTILE_KEEP=1 (keep the temp dir and say
# where), HOSTILE_SKIP (set by CMake for a program that could not be built:
# skip with that reason), HOSTILE_CBN_ARGS (more launcher options, e.g.
# --memory), HOSTILE_PRELOAD (a library the user preloads, in both runs:
# jemalloc, tcmalloc; skip when it is not installed), HOSTILE_ENV (VAR=VALUE
# words set in both runs' environment, e.g. CBN_CTL=1), HOSTILE_EXTRA_THREAD=1
# (the profiled run has the agent's background thread: --memory) or
# =NAME[,NAME...] (it has threads so named, left out of the thread-name lists
# too: --off-cpu's cbn-offcpu, the control socket's cbn-ctl),
# HOSTILE_EXPECT_SAMPLES=0 (the program makes samples impossible, e.g.
# RLIMIT_SIGPENDING 0: no check that the report has some).
# Exit 0 pass, 1 fail, 77 skip.
set -u

B=${CBN_BUILD_DIR:?CBN_BUILD_DIR not set}
CBN=${CBN:-$B/cbottleneck}
NAME=${1:?usage: run.sh NAME [ARGS...]}
shift
WHAT="$NAME${*:+ $*}" # for messages
case $NAME in
/*) PROG=$NAME # an interpreter (py_own.sh)
	NAME=${NAME##*/} ;;
*) PROG=$B/tests/hostile/$NAME ;;
esac
FREQ=${HOSTILE_FREQ:-999}
LIMIT=60       # the watchdog: a run still going after this many seconds is "hung"
MIN_CPU=0.3    # a program that used this much CPU must have samples in the report

skip() {
	echo "SKIP: $*"
	exit 77
}
[ -n "${HOSTILE_SKIP:-}" ] && skip "$HOSTILE_SKIP"
# Programs of this build that are missing fail the test: a broken build must
# not pass as "skipped".
[ -x "$PROG" ] || { echo "FAIL: $PROG is missing: this build should have made it"; exit 1; }
[ -x "$CBN" ] || { echo "FAIL: $CBN is missing: this build should have made it"; exit 1; }
command -v timeout >/dev/null || skip "timeout (coreutils) not found"
if [ -n "${HOSTILE_PRELOAD:-}" ]; then
	[ -e "$HOSTILE_PRELOAD" ] || skip "$HOSTILE_PRELOAD is not installed (tools/deps.sh --test)"
	export LD_PRELOAD=$HOSTILE_PRELOAD
fi
read -r -a CBN_ARGS <<<"${HOSTILE_CBN_ARGS:-}"
read -r -a RUN_ENV <<<"${HOSTILE_ENV:-}"

# Both runs start with only 0, 1 and 2 open: close what ctest or the shell
# left open (not 255, where bash may keep this script).
for fd in /proc/$$/fd/*; do
	fd=${fd##*/}
	case $fd in 0 | 1 | 2 | 255) ;; *) eval "exec $fd>&-" 2>/dev/null ;; esac
done
ulimit -c 0 # no core files in the working directories

T=$(mktemp -d "${TMPDIR:-/tmp}/hostile.$NAME.XXXXXX") || exit 1
if [ "${HOSTILE_KEEP:-0}" = 1 ]; then
	echo "keeping $T"
else
	trap 'rm -rf "$T"' EXIT
fi

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# children_cpu: sets CCPU to the user+sys seconds of this shell's reaped
# children so far (the second line of `times`, "XmY.YYYs XmZ.ZZZs"); `times`
# must run in this shell, not in a $(...) subshell.
children_cpu() {
	times >"$T/times"
	CCPU=$(awk 'NR == 2 { split($0, f, /[ms ]+/); print f[1] * 60 + f[2] + f[3] * 60 + f[4] }' "$T/times")
}

# run_one MODE ARGS...: run the program in $T/MODE/cwd with TMPDIR=$T/MODE/tmp,
# stdin /dev/null, stdout/stderr to $T/MODE.out/.err.  Sets RC, WALL_MS, and
# CPU (user+sys seconds of the run and its reaped descendants).  The shell's
# own "Segmentation fault" notices go to $T/MODE.shell, not to the program's
# stderr.
run_one() {
	local mode=$1 d=$T/$1 t0 t1 c0 c1
	shift
	mkdir -p "$d/cwd" "$d/tmp"
	children_cpu
	c0=$CCPU
	t0=$(now_ms)
	if [ "$mode" = plain ]; then
		{ (cd "$d/cwd" && TMPDIR=$d/tmp exec env "${RUN_ENV[@]}" timeout -s KILL $LIMIT \
			"$PROG" "$@") </dev/null >"$T/$mode.out" 2>"$T/$mode.err"; } 2>"$T/$mode.shell"
	else
		{ (cd "$d/cwd" && TMPDIR=$d/tmp exec env "${RUN_ENV[@]}" timeout -s KILL $LIMIT \
			"$CBN" -q "${CBN_ARGS[@]}" --report "$T/report.txt" -o "$T/sess" -F "$FREQ" -- \
			"$PROG" "$@") </dev/null >"$T/$mode.out" 2>"$T/$mode.err"; } 2>"$T/$mode.shell"
	fi
	RC=$?
	t1=$(now_ms)
	children_cpu
	c1=$CCPU
	WALL_MS=$((t1 - t0))
	CPU=$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.2f", b - a }')
}

FAILS=()
fail() { FAILS+=("$*"); }

# first_diff A B: "N line(s) differ; first: 'plain line' -> 'profiled line'".
first_diff() {
	diff "$1" "$2" | awk '
		/^[<>]/ { n++ }
		/^</ && !a { a = substr($0, 3) }
		/^>/ && !b { b = substr($0, 3) }
		END {
			printf "%d line(s) differ; first: ", n
			printf "%s -> %s", (a == "" ? "(none)" : "\047" a "\047"), (b == "" ? "(none)" : "\047" b "\047")
		}'
}

# hung RC WALL_MS: killed by the watchdog (137 after at least LIMIT seconds)?
hung() { [ "$1" = 137 ] && [ "$2" -ge $(((LIMIT - 1) * 1000)) ]; }

# --- plain run -----------------------------------------------------------------
run_one plain "$@"
PLAIN_RC=$RC PLAIN_MS=$WALL_MS PLAIN_CPU=$CPU
if hung $PLAIN_RC $PLAIN_MS; then
	echo "FAIL: $WHAT: the plain run hung (killed after ${LIMIT}s): the test itself is broken"
	exit 1
fi
if [ "$PLAIN_RC" = 77 ]; then
	skip "$(sed -n 's/^SKIP: //p' "$T/plain.err" | head -1)"
fi

# --- profiled run --------------------------------------------------------------
run_one prof "$@"
PROF_RC=$RC PROF_MS=$WALL_MS
# The program's stderr, without the watchdog's own lines ("timeout: warning:
# timer_create: ..." when the user's RLIMIT_SIGPENDING is exhausted) and, in
# the profiled run, the launcher's.
sed '/^timeout: /d' "$T/plain.err" >"$T/plain.err.program"
sed '/^cbottleneck: /d; /^timeout: /d' "$T/prof.err" >"$T/prof.err.program"

if hung $PROF_RC $PROF_MS; then
	fail "hung: still running after ${LIMIT}s under cbottleneck (killed by the watchdog)"
elif [ "$PROF_RC" != "$PLAIN_RC" ]; then
	fail "exit status $PROF_RC under cbottleneck, $PLAIN_RC without"
fi

# --- stdout and stderr ---------------------------------------------------------
# --memory keeps the agent's background thread for the whole run (it writes
# the memory counters every 10 ms: docs/agent.md), --off-cpu its sampler
# thread cbn-offcpu (docs/waiting.md): the one thread the program can see,
# counted out of the profiled run's thread views, and its name out of the
# thread-name lists ("comm[tag]: name name ...").
if [ "${HOSTILE_EXTRA_THREAD:-0}" != 0 ]; then
	awk -v names="$HOSTILE_EXTRA_THREAD" 'BEGIN { n = split(names, name, ","); if (names == "1") n = 1 }
		/^threads\[[^]]*\]: tasks=[0-9]+ Threads=[0-9]+$/ {
		split($2, a, "="); split($3, b, "=");
		print $1 " tasks=" a[2] - n " Threads=" b[2] - n; next }
		names != "1" && /^comm\[[^]]*\]:/ {
			line = $1
			for (i = 2; i <= NF; i++) {
				ours = 0
				for (k = 1; k <= n; k++) if ($i == name[k]) ours = 1
				if (!ours) line = line " " $i
			}
			print line; next }
		{ print }' \
		"$T/prof.out" >"$T/prof.out.adj" && mv "$T/prof.out.adj" "$T/prof.out"
fi
if ! cmp -s "$T/plain.out" "$T/prof.out"; then
	fail "stdout differs: $(first_diff "$T/plain.out" "$T/prof.out")"
	echo "--- stdout: diff plain profiled"
	diff "$T/plain.out" "$T/prof.out" | head -40
fi
if ! cmp -s "$T/plain.err.program" "$T/prof.err.program"; then
	fail "stderr differs: $(first_diff "$T/plain.err.program" "$T/prof.err.program")"
	echo "--- stderr (without 'cbottleneck: ' and 'timeout: ' lines): diff plain profiled"
	diff "$T/plain.err.program" "$T/prof.err.program" | head -40
fi

# --- files ---------------------------------------------------------------------
# listing DIR: every entry below DIR with its type and mode, sorted.
listing() { (cd "$1" && find . -mindepth 1 -printf '%y %m %P\n' | LC_ALL=C sort); }
for where in cwd tmp; do
	listing "$T/plain/$where" >"$T/plain.$where.ls"
	listing "$T/prof/$where" >"$T/prof.$where.ls"
	if ! cmp -s "$T/plain.$where.ls" "$T/prof.$where.ls"; then
		fail "files in the $where differ: $(first_diff "$T/plain.$where.ls" "$T/prof.$where.ls")"
		echo "--- files in the $where: diff plain profiled"
		diff "$T/plain.$where.ls" "$T/prof.$where.ls" | head -20
	fi
	while read -r type _ path; do
		[ "$type" = f ] && [ -f "$T/prof/$where/$path" ] || continue
		if ! out=$(cmp "$T/plain/$where/$path" "$T/prof/$where/$path" 2>&1); then
			fail "file $path differs: ${out//$T\//}"
			echo "--- cmp $path: ${out//$T\//}"
		fi
	done <"$T/plain.$where.ls"
done

# --- the report ----------------------------------------------------------------
SAMPLES=-
if ! hung $PROF_RC $PROF_MS; then
	if [ ! -s "$T/report.txt" ]; then
		fail "no report: report.txt is missing or empty"
	else
		# -q leaves out the header (Samples:); the CPU table's first line
		# is "         N samples in S CPU seconds", or "N samples (W periods
		# of CPU) in S CPU seconds".
		SAMPLES=$(sed -n 's/^ *\([0-9][0-9]*\) samples \((.*) \)\{0,1\}in .*/\1/p' "$T/report.txt" | head -1)
		SAMPLES=${SAMPLES:-0}
		if [ "${HOSTILE_EXPECT_SAMPLES:-1}" = 1 ] &&
			awk -v c="$PLAIN_CPU" -v m="$MIN_CPU" 'BEGIN { exit !(c >= m) }' &&
			[ "$SAMPLES" -eq 0 ]; then
			fail "the report has no samples, though the program used ${PLAIN_CPU}s of CPU"
		fi
	fi
fi

SUMMARY="plain: rc=$PLAIN_RC ${PLAIN_MS}ms cpu=${PLAIN_CPU}s; profiled: rc=$PROF_RC ${PROF_MS}ms samples=$SAMPLES"
if [ ${#FAILS[@]} -gt 0 ]; then
	if [ -s "$T/prof.err" ] && grep -q '^cbottleneck: ' "$T/prof.err"; then
		echo "--- cbottleneck said:"
		grep '^cbottleneck: ' "$T/prof.err" | head -5
	fi
	for f in "${FAILS[@]}"; do
		echo "FAIL: $WHAT: $f"
	done
	echo "($SUMMARY)"
	exit 1
fi
echo "PASS: $WHAT ($SUMMARY)"
exit 0
