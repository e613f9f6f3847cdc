#!/usr/bin/env bash
# mem_test.sh CASE — the allocation hooks (libcbottleneck_mem.so) end to end:
# runs a memory example under `cbottleneck --memory -o DIR`, checks that its
# stdout and exit status are those of a plain run, and reads the session file
# with memdump (the format reader) to check what the hooks recorded against
# what the example is known to do.  Tolerances are stated at each check.
# Needs CBN_BUILD_DIR.  Exit 0 pass, 1 fail, 77 skip (with the reason).
set -u
B=${CBN_BUILD_DIR:?CBN_BUILD_DIR not set}
CBN=$B/cbottleneck
DUMP=$B/tests/agent/memdump
EX=$B/examples
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CASE=${1:?usage: mem_test.sh CASE}

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL ($CASE): $*"; [ -f "$T/dump" ] && cat "$T/dump"; exit 1; }
for f in "$CBN" "$DUMP" "$B/lib/libcbottleneck_mem.so"; do
	[ -e "$f" ] || { echo "FAIL ($CASE): $f is missing: this build should have made it"; exit 1; }
done

T=$(mktemp -d /tmp/cbn-mem-test.XXXXXX)
trap 'rm -rf "$T"' EXIT

# profile OPTS... -- PROG ARGS...: plain run, then under cbottleneck with
# OPTS into $T/s; stdout and exit status must match; dumps the main process's
# file into $T/dump.
profile() {
	local opts=()
	while [ "$1" != "--" ]; do opts+=("$1"); shift; done
	shift
	"$@" >"$T/plain.out" 2>"$T/plain.err"
	local prc=$?
	rm -rf "$T/s"
	"$CBN" -q --no-cuda "${opts[@]}" -o "$T/s" --report "$T/report.txt" -- "$@" \
		>"$T/prof.out" 2>"$T/prof.err"
	local rc=$?
	[ "$rc" = "$prc" ] || { cat "$T/prof.err"; fail "exit status $rc under --memory, $prc without"; }
	if [ "${NO_THREAD_VIEWS:-0}" = 1 ]; then
		# A hostile program's own thread views: --memory adds the agent's
		# background thread (docs/agent.md section 12).
		sed -i '/^threads\[/d' "$T/plain.out" "$T/prof.out"
	fi
	cmp -s "$T/plain.out" "$T/prof.out" || {
		diff "$T/plain.out" "$T/prof.out" | head
		fail "stdout differs under --memory"
	}
	local f
	f=$(ls "$T/s"/*.cbp 2>/dev/null | head -1)
	[ -n "$f" ] || fail "no session file"
	"$DUMP" "$f" >"$T/dump" || fail "memdump: the file is damaged"
}

# val KEY: a value from the dump.
val() { sed -n "s/^$1=//p" "$T/dump" | head -1; }

# between V LO HI WHAT
between() {
	awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }' ||
		fail "$4: $1 not in [$2, $3]"
}

# site_line KEY: the source line (file:line) of a top_site from the dump.
site_line() {
	local s mod off
	s=$(val "$1")
	[ -n "$s" ] || fail "no $1 in the dump"
	mod=${s%+0x*}
	off=${s##*+}
	addr2line -e "$mod" "$off" | sed 's/ (discriminator.*//'
}

# marker_line FILE MARKER: file:line of the line carrying the marker comment.
marker_line() {
	echo "$SRC/examples/$1:$(grep -n "/\* $2" "$SRC/examples/$1" | head -1 | cut -d: -f1)"
}

common() {
	[ "$(val mem.state)" = 1 ] || fail "header.mem.state is $(val mem.state), not ON ($(val mem.reason))"
	[ "$(val damaged)" = 0 ] || fail "the file is damaged"
	[ "$(val bad_chunk)" = 0 ] || fail "records in the wrong chunk"
	[ "$(val counters)" -ge 1 ] || fail "no MEM_COUNTERS record"
	# A record is lost only when the file cannot grow in time (another
	# thread holds the growth lock for 20 ms: a preempted thread on a
	# loaded machine): at most 1 in 10 000.
	[ "$(val mem.lost)" -le $(($(val mem.sampled) / 10000)) ] ||
		fail "$(val mem.lost) of $(val mem.sampled) sampled allocations lost"
	# Every MEM_FREE belongs to a MEM_ALLOC of the same file.
	[ "$(val matched)" = "$(val frees)" ] || fail "$(val frees) frees, only $(val matched) matched"
}

case $CASE in
peak)
	# 64 blocks of 1 MiB live at once: host_peak (usable sizes, exact to
	# within CBN_MEM_FLUSH per thread) within 10 % of 64 MiB; the site that
	# allocated the most is PEAK-SITE.
	profile --memory -- "$EX/mem_peak"
	common
	flags=$(val mem.flags)
	[ $((flags & 2)) = 2 ] || fail "no CBN_MEMF_USABLE with glibc's malloc (flags $flags)"
	[ $((flags & 1)) = 0 ] || fail "EXACT at the default rate"
	[ "$(val mem.rate)" = 524288 ] || fail "rate $(val mem.rate), not the default 524288"
	between "$(val mem.host_peak)" 60397978 73819750 "host_peak vs 64 MiB (±10 %)"
	# RSS is read every 10 ms and the 64 blocks (mmapped by glibc: 1 MiB is
	# over its mmap threshold, which the hooks leave alone) are live for a
	# millisecond or two: any reading between the process's base and the
	# peak, but never the session file's pages on top (they are dropped
	# from the mapping as they fill).
	between "$(val mem.rss_peak)" 1048576 92274688 "rss_peak (a reading, at most peak + 24 MiB)"
	# Sampled: each 1 MiB block is sampled with probability 1-e^-2 = 86 %.
	between "$(val heap)" 40 400 "sampled heap records"
	[ "$(val with_stack)" = "$(val allocs)" ] || fail "records without a stack"
	[ "$(site_line top_site)" = "$(marker_line mem_peak.c PEAK-SITE)" ] ||
		fail "top site $(site_line top_site), not PEAK-SITE"
	[ "$(val live_records)" -le 2 ] || fail "$(val live_records) sampled blocks still live"
	;;
exact)
	# --memory-rate 1: every allocation has a record.  mem_leak 1000 makes
	# 3000 allocations of 1 KiB and keeps 1000; libc adds stdout's buffer.
	profile --memory --memory-rate 1 -- "$EX/mem_leak" 1000
	common
	[ $(($(val mem.flags) & 1)) = 1 ] || fail "no CBN_MEMF_EXACT at rate 1"
	between "$(val heap)" 3000 3010 "MEM_ALLOC records (3000 + libc's own)"
	between "$(val live_bytes)" 1024000 $((1024000 + 16384)) "live bytes at exit (1000 KiB leaked)"
	[ "$(site_line top_live_site)" = "$(marker_line mem_leak.c LEAK-SITE)" ] ||
		fail "top live site $(site_line top_live_site), not LEAK-SITE"
	between "$(val top_live_site_share)" 0.95 1 "LEAK-SITE's share of the live bytes"
	between "$(val mem.allocs)" 3000 3100 "header.mem.allocs"
	;;
capture)
	# Outside capture windows no allocation is recorded, the counters run
	# on: --capture-range api with no cbn_start() at rate 1 (every
	# allocation would have a record) gives none of mem_leak's 3000.
	profile --memory --memory-rate 1 --capture-range api -- "$EX/mem_leak" 1000
	[ "$(val heap)" -le 5 ] || fail "$(val heap) allocation records outside any window"
	between "$(val mem.allocs)" 3000 3100 "header.mem.allocs (counters run outside windows)"
	;;
sampling)
	# Poisson byte sampling: 2 million blocks of 16..481 bytes (mean 248.5,
	# 497 MB in all) at rate 512 KiB give about 948 samples; 30 % either
	# way is more than 9 standard deviations.  The exact counters count
	# every call.
	profile --memory -- "$EX/mem_churn" 2
	common
	between "$(val heap)" 663 1233 "sampled allocations"
	between "$(val mem.allocs)" 2000000 2000200 "header.mem.allocs"
	between "$(val mem.frees)" 1999990 2000200 "header.mem.frees"
	[ "$(site_line top_site)" = "$(marker_line mem_churn.c CHURN-SITE)" ] ||
		fail "top site $(site_line top_site), not CHURN-SITE"
	between "$(val mem.host_peak)" 1 4194304 "host_peak of a loop that keeps 8 blocks"
	;;
fast_exact)
	# The sampling run's counters (most calls counted inline in the hooks,
	# from glibc's chunk headers) equal those of rate 1 (every call through
	# the full accounting, every block in the live table): live bytes,
	# calls and bytes allocated exactly; the peak to within what the three
	# threads of mem_threads may hold back (CBN_MEM_FLUSH, 64 KiB, each).
	for run in "mem_leak 8192" "mem_threads 5000"; do
		# shellcheck disable=SC2086
		profile --memory -- "$EX"/$run
		common
		cp "$T/dump" "$T/dump.fast"
		# shellcheck disable=SC2086
		profile --memory --memory-rate 1 -- "$EX"/$run
		for k in host_live allocs frees alloc_bytes; do
			a=$(sed -n "s/^mem.$k=//p" "$T/dump.fast")
			[ "$a" = "$(val mem.$k)" ] ||
				fail "$run: mem.$k $a at the default rate, $(val mem.$k) at rate 1"
		done
		a=$(sed -n "s/^mem.host_peak=//p" "$T/dump.fast")
		between "$a" $(($(val mem.host_peak) - 3 * 65536)) $(($(val mem.host_peak) + 3 * 65536)) \
			"$run: host_peak at the default rate against rate 1"
	done
	;;
counts_threads | counts_exit)
	# Every call counted in header.mem, at the default rate and at rate 1:
	# 1000 threads of 100 malloc/free pairs each end below every flush
	# threshold (their counts arrive at their end), or four threads'
	# counts are pending when main ends the process with _exit(3)
	# (issue 22: 101,066 calls of 200,000 were reported).  libc adds a few
	# of its own per thread (thread start) and at start.
	mode=${CASE#counts_}
	for rate in "" "--memory-rate 1"; do
		# shellcheck disable=SC2086
		profile --memory $rate -- "$B/tests/agent/progs/mem_counts" "$mode"
		n=$(sed -n 's/^pairs //p' "$T/plain.out")
		[ -n "$n" ] || fail "the program printed no count"
		between "$(val mem.allocs)" "$n" $((n + n / 20 + 200)) "header.mem.allocs ($mode${rate:+, $rate})"
		between "$(val mem.frees)" "$n" $((n + n / 20 + 200)) "header.mem.frees ($mode${rate:+, $rate})"
	done
	;;
threads)
	# Two producers, one consumer: every block is freed by another thread
	# than the one that allocated it (exact mode, 2 x 5000 blocks).
	profile --memory --memory-rate 1 -- "$EX/mem_threads" 5000
	common
	between "$(val cross)" 10000 10100 "frees made by another thread"
	[ "$(site_line top_site)" = "$(marker_line mem_threads.c PRODUCE-SITE)" ] ||
		fail "top site $(site_line top_site), not PRODUCE-SITE"
	[ "$(val live_bytes)" -le 16384 ] || fail "$(val live_bytes) bytes left live"
	;;
cxx)
	# operator new/delete in every form: new int / char[] / aligned Wide /
	# Wide[] / nothrow int[] (the compiler may elide a paired new/delete)
	# and vector doubling (11 buffers for 1000 longs), all freed.
	[ -x "$EX/mem_cxx" ] || skip "no C++ compiler in this build"
	profile --memory --memory-rate 1 -- "$EX/mem_cxx" 200
	common
	between "$(val heap)" 2800 3300 "MEM_ALLOC records of 200 rounds"
	[ "$(val live_bytes)" -le 8192 ] || fail "$(val live_bytes) bytes left live"
	;;
cxx_local)
	# A C++ library dlopen'd with RTLD_LOCAL (as CPython loads torch): its
	# libstdc++ is outside the global scope, where RTLD_NEXT looks.  Its
	# operator new must stay libstdc++'s (a failed new calls the
	# new-handler and throws std::bad_alloc, a nothrow one returns
	# nullptr: stdout as in the plain run), and the lookup must not be
	# retried at every call (it was: a failing dlsym at each new and
	# delete, 440-640 ns a pair here, microseconds in a process with
	# torch's hundreds of libraries).  A pair's CPU time under --memory
	# at most 300 ns: plain, 10-20 ns here.
	prog=$B/tests/agent/progs/mem_local_host
	[ -x "$prog" ] || skip "no C++ compiler in this build"
	profile --memory -- "$prog" "$B/tests/agent/progs/libmem_local.so" 200000
	common
	grep -q "thrown after the new-handler" "$T/prof.out" ||
		fail "a failed new under --memory: $(head -1 "$T/prof.out")"
	pair=$(sed -n 's/^pair_ns //p' "$T/prof.err")
	[ -n "$pair" ] || fail "the program printed no pair time: $(cat "$T/prof.err")"
	between "$pair" 0 300 "CPU ns per new/delete pair under --memory"
	between "$(val mem.allocs)" 200000 220000 "header.mem.allocs (every new counted)"
	;;
fork)
	# Fork and exec while two threads allocate (tests/hostile's
	# mem_forkexec), every allocation recorded: 41 processes and the
	# helper's images, each file whole, its header ON, no record lost, and
	# every MEM_FREE matched by a MEM_ALLOC of the same file.
	prog=$B/tests/hostile/mem_forkexec
	[ -x "$prog" ] || fail "$prog is missing: this build should have made it"
	NO_THREAD_VIEWS=1 profile --memory --memory-rate 1 -- "$prog"
	n=0
	for f in "$T/s"/*.cbp; do
		"$DUMP" "$f" >"$T/dump" || fail "memdump: $f is damaged"
		common
		n=$((n + 1))
	done
	[ "$n" -ge 41 ] || fail "$n session files, expected the parent and 40 children at least"
	;;
rawfork)
	# A child of the raw fork system call (no atfork handler runs) that
	# allocates 100,000 blocks: the parent's file counts its own 1000 (and
	# libc's few) and holds no record of the child's, which the hooks know
	# for a child without a system call (a MADV_WIPEONFORK page).
	profile --memory -- "$B/tests/agent/progs/mem_rawfork"
	common
	between "$(val mem.allocs)" 1000 1100 "the parent's header.mem.allocs"
	between "$(val mem.frees)" 1000 1100 "the parent's header.mem.frees"
	between "$(val heap)" 0 20 "the parent's sampled records (1 MB of its own: about 2)"
	;;
off)
	# Without --memory nothing is preloaded and header.mem stays OFF.
	profile -- "$EX/mem_leak" 100
	[ "$(val mem.state)" = 0 ] || fail "header.mem.state $(val mem.state) without --memory"
	[ "$(val allocs)" = 0 ] || fail "MEM_ALLOC records without --memory"
	env -u LD_PRELOAD "$CBN" -q -v --no-cuda -o "$T/s2" -- /bin/sh -c 'echo "$LD_PRELOAD"' \
		>"$T/preload" 2>/dev/null
	grep -q libcbottleneck_mem "$T/preload" && fail "the hooks preloaded without --memory"
	# The program's environment holds no LD_PRELOAD of ours (issue 31);
	# the loader's own trace gives the order of what it preloaded.
	LD_DEBUG=files "$CBN" -q --no-cuda --memory=host -o "$T/s3" -- \
		/bin/sh -c 'echo "[$LD_PRELOAD]"' >"$T/preload" 2>"$T/ld"
	[ "$(cat "$T/preload")" = "[]" ] || fail "the program sees LD_PRELOAD=$(cat "$T/preload")"
	# (the lines of the first process that loaded the agent: the launcher
	# has libm too)
	order() {
		awk '/file=[^ ]*libcbottleneck\.so/ && !pid { pid = $1 }
			{ line[NR] = $0; who[NR] = $1 }
			END { for (i = 1; i <= NR; i++) if (who[i] == pid &&
				match(line[i], /file=[^ ]*(libcbottleneck[a-z_]*\.so|libm\.so\.6)/)) {
				f = substr(line[i], RSTART + 5, RLENGTH - 5); sub(/.*\//, "", f)
				if (!seen[f]++) printf "%s%s", n++ ? " " : "", f } }' "$T/ld"
	}
	case "$(order)" in
	"libcbottleneck_mem.so libcbottleneck.so"*) ;;
	*) fail "preloaded: $(order), not the hooks first then the agent" ;;
	esac
	LD_DEBUG=files LD_PRELOAD=/lib/x86_64-linux-gnu/libm.so.6 "$CBN" -q --no-cuda --memory \
		-o "$T/s4" -- /bin/sh -c 'echo "[$LD_PRELOAD]"' >"$T/preload" 2>"$T/ld"
	[ "$(cat "$T/preload")" = "[/lib/x86_64-linux-gnu/libm.so.6]" ] ||
		fail "the program sees LD_PRELOAD=$(cat "$T/preload"), not the user's alone"
	# (the MPI wrappers, when built, come between: docs/distributed.md)
	order | grep -Eq "libcbottleneck.so (libcbottleneck_mpi.so )?libm.so.6$" ||
		fail "the user's LD_PRELOAD is not kept last: $(order)"
	;;
options)
	# Bad --memory values are usage errors (exit 2); a missing hooks
	# library is a refusal (exit 125), each with one line.
	for bad in "--memory-rate 0" "--memory-rate abc" "--memory-rate 5X" "--memory-rate -1" \
		"--memory=gpu"; do
		# shellcheck disable=SC2086
		"$CBN" $bad -- /bin/true 2>"$T/err"
		rc=$?
		[ "$rc" = 2 ] || fail "$bad: exit $rc, not 2"
		[ "$(wc -l <"$T/err")" = 1 ] || fail "$bad: not one line: $(cat "$T/err")"
	done
	"$CBN" -q --no-cuda --memory --memory-rate 1MiB -o "$T/s5" -- "$EX/mem_leak" 10 >/dev/null 2>&1 ||
		fail "--memory-rate 1MiB refused"
	"$DUMP" "$T/s5"/*.cbp >"$T/dump"
	[ "$(val mem.rate)" = 1048576 ] || fail "--memory-rate 1MiB gave rate $(val mem.rate)"
	mkdir -p "$T/agentonly"
	cp "$B/lib/libcbottleneck.so" "$T/agentonly/"
	CBN_AGENT_DIR=$T/agentonly "$CBN" --memory -- /bin/true 2>"$T/err"
	rc=$?
	[ "$rc" = 125 ] || fail "missing libcbottleneck_mem.so: exit $rc, not 125"
	grep -q "libcbottleneck_mem.so" "$T/err" || fail "the refusal does not name the library"
	# --memory=cuda alone does not preload the host hooks.
	"$CBN" -q --no-cuda --memory=cuda -o "$T/s6" -- /bin/sh -c 'echo "$LD_PRELOAD"' \
		>"$T/preload" 2>/dev/null
	grep -q libcbottleneck_mem "$T/preload" && fail "--memory=cuda preloaded the host hooks"
	;;
*)
	echo "unknown case $CASE"
	exit 2
	;;
esac
echo "PASS ($CASE)"
