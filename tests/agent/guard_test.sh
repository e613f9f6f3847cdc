#!/usr/bin/env bash
# guard_test.sh CASE — what the agent records about the program's limits,
# sandboxes and short-lived threads (issue 22), read back from the session
# files with cbpdump after a run under the launcher.  The programs' own
# behaviour (output, status, descriptors) is the hostile suite's to check.
# Needs CBN_BUILD_DIR.  Exit 0 pass, 1 fail, 77 skip (with the reason).
set -u
B=${CBN_BUILD_DIR:?CBN_BUILD_DIR not set}
CBN=$B/cbottleneck
DUMP=$B/tests/agent/cbpdump
H=$B/tests/hostile
CASE=${1:?usage: guard_test.sh CASE}

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL ($CASE): $*"; exit 1; }
for f in "$CBN" "$DUMP"; do
	[ -e "$f" ] || fail "$f is missing: this build should have made it"
done
T=$(mktemp -d /tmp/cbn-guard-test.XXXXXX)
trap 'rm -rf "$T"' EXIT

# run OPTS... -- PROG ARGS...: under the launcher into $T/s (status in RC,
# stderr in $T/err); dumps every session file into $T/dump.
run() {
	local opts=()
	while [ "$1" != "--" ]; do opts+=("$1"); shift; done
	shift
	rm -rf "$T/s"
	"$CBN" --no-cuda "${opts[@]}" -o "$T/s" --report "$T/report.txt" -- "$@" \
		>"$T/out" 2>"$T/err"
	RC=$?
	: >"$T/dump"
	for f in "$T/s"/*.cbp; do
		[ -e "$f" ] || continue
		"$DUMP" "$f" >>"$T/dump" || fail "cbpdump: $f is damaged"
	done
}

# val PREFIX KEY: KEY's value on the first dump line starting with PREFIX.
val() {
	awk -v p="$1" -v k="$2" 'index($0, p) == 1 {
		for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) { print substr($i, length(k) + 2); exit } }' \
		"$T/dump"
}

case $CASE in
short_threads)
	# 1000 threads of 0.5 ms each, shorter than a period at 999 Hz: the
	# sample each writes at its end (with the probability its CPU gives
	# one) makes their samples stand for at least 90 % of their measured
	# CPU, less the agent's own start and end work in their clocks
	# (site_ns OTHER).  Expected 100 %; 1000 draws: 3 standard deviations
	# are under 5 %.
	run -F 999 -- "$H/short_threads"
	[ "$RC" = 0 ] || fail "status $RC"
	period=$(val file period_ns)
	main=$(val file pid)
	read -r sampled measured <<<"$(awk -v m="$main" -v p="$period" '/^thread / {
		tid = w = c = 0
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^tid=/) tid = substr($i, 5)
			if ($i ~ /^weight=/) w = substr($i, 8)
			if ($i ~ /^cpu_ns=/) c = substr($i, 8)
		}
		if (tid != m) { s += w * p; n += c } }
		END { printf "%.0f %.0f\n", s, n }' "$T/dump")"
	other=$(val overhead other_ns)
	ends=$(val guard end_samples)
	echo "workers: sampled ${sampled} ns, measured ${measured} ns, agent's ${other} ns, end samples ${ends}"
	awk -v s="$sampled" -v m="$measured" -v o="$other" 'BEGIN { exit !(m > o && s >= 0.9 * (m - o)) }' ||
		fail "the samples stand for $sampled ns of the workers' $measured ns ($other ns the agent's)"
	[ "${ends:-0}" -ge 300 ] || fail "only ${ends:-0} samples at thread end"
	;;
ring_threads)
	# --ring with --memory and 3000 threads, a third of them with samples,
	# each of those taking a chunk of a 32 MiB file (512 chunks): samples
	# kept (before: all lost buffer_full, 0 samples), a few lost at most,
	# and the header says up to when older data may be missing.  (In the
	# default 64 MiB, 1024 chunks, about as many as the run takes, the ring
	# may reuse only chunks that held nothing: nothing is lost then, and
	# the header rightly says nothing.)
	run --ring 1s --memory --buffer-mb 32 -- "$H/ring_churn"
	[ "$RC" = 0 ] || fail "status $RC"
	samples=$(val samples count)
	[ -n "$samples" ] || samples=$(awk '/^samples / { for (i = 1; i <= NF; i++) if ($i ~ /^n=/) print substr($i, 3) }' "$T/dump" | head -1)
	kept=$(grep -c '^thread .*samples=[1-9]' "$T/dump")
	full=$(val guard lost_buffer_full)
	until=$(val guard ring_lost_until_ns)
	echo "threads with samples kept: $kept, buffer_full: $full, lost until: $until"
	[ "$kept" -ge 50 ] || fail "only $kept threads with samples in the ring"
	[ "${full:-0}" -le 50 ] || fail "$full samples lost buffer_full"
	[ "${until:-0}" -gt 0 ] || fail "the ring reused chunks but the header says nothing lost"
	;;
seccomp)
	# A filter with TSYNC: the header says so (kind 3), for the threads
	# that had a sampler, and signals taken afterwards are counted.
	run -- "$H/seccomp_tsync"
	[ "$RC" = 0 ] || fail "status $RC"
	[ "$(val guard seccomp)" = 3 ] || fail "guard.seccomp $(val guard seccomp), not 3 (filter, all threads)"
	[ "$(val guard seccomp_threads)" -ge 4 ] || fail "guard.seccomp_threads $(val guard seccomp_threads)"
	[ "$(val guard lost_sandboxed)" -ge 1 ] || fail "no sample counted as sandboxed after the filter"
	# strict mode on the main thread, which ends with the raw exit call
	run -- "$H/seccomp_strict" main
	[ "$RC" = 0 ] || fail "status $RC (strict)"
	[ "$(val guard seccomp)" = 1 ] || fail "guard.seccomp $(val guard seccomp), not 1 (strict)"
	;;
sigqueue)
	# RLIMIT_SIGPENDING 0: the perf event's signal cannot be queued; the
	# kernel's SIGIO is taken, the thread moves to a POSIX timer (which
	# cannot be made either), and the header says why.
	run -- "$H/sigpending_limit" zero
	[ "$RC" = 0 ] || fail "status $RC"
	grep -q "reason=perf event signals could not be queued (RLIMIT_SIGPENDING)" "$T/dump" ||
		fail "no RLIMIT_SIGPENDING reason in the exec'd image's header"
	grep -q 'sigqueue_full=[1-9]' "$T/dump" || fail "guard.sigqueue_full is 0"
	;;
overhead)
	# The off-CPU sampler is the launcher's (no thread of ours in the
	# program): its CPU is in session.json's launcher_cpu_ns and in the
	# report's overhead line; the constructor's own CPU is in init_cpu_ns.
	run --off-cpu=1000 -- "$H/short_threads"
	[ "$RC" = 0 ] || fail "status $RC"
	[ "$(val overhead threads)" = 0 ] || fail "overhead.threads $(val overhead threads), not 0"
	[ "$(val overhead init_cpu_ns)" -gt 0 ] || fail "overhead.init_cpu_ns is 0"
	grep -Eq '"launcher_cpu_ns":[[:space:]]*[1-9]' "$T/s/session.json" ||
		fail "session.json has no launcher_cpu_ns"
	# the header's short form gives the total; -v says what it is made of
	grep -q "profiler overhead [0-9.]*% of the program's CPU" "$T/report.txt" ||
		fail "no overhead in the header: $(grep -i overhead "$T/report.txt")"
	"$CBN" report -v "$T/s" >"$T/report_v.txt" 2>&1 || fail "report -v: $(tail -3 "$T/report_v.txt")"
	grep -q "in the launcher, outside the program" "$T/report_v.txt" ||
		fail "the overhead line does not count the launcher: $(grep -i overhead "$T/report_v.txt")"
	;;
unprofiled)
	# A child drops to nobody and execs: its image cannot write the session
	# (0700, the user's); the image that execs says so (reason 1).
	[ "$(id -u)" = 0 ] || skip "not root: cannot change credentials"
	run -- "$H/setuid_exec"
	[ "$RC" = 0 ] || fail "status $RC"
	grep -q '^unprofiled .*reason=1 uid=65534 .*path=.*hostile_helper' "$T/dump" ||
		fail "no UNPROFILED record for the exec as nobody"
	[ ! -e "$T/s/ctl" ] || fail "a ctl directory is left in the session"
	;;
as_refused)
	# RLIMIT_AS 8 MiB: the session file's first MiB would take more than
	# an eighth: the agent refuses with the limit in its message, and the
	# program runs on as without it.
	cat >"$T/as.c" <<'EOC'
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	struct rlimit rl = {8 << 20, 8 << 20};

	if (argc > 1) {
		puts("ran under 8 MiB");
		return 0;
	}
	if (setrlimit(RLIMIT_AS, &rl))
		return 1;
	execl("/proc/self/exe", argv[0], "run", (char *)NULL);
	return 2;
}
EOC
	cc -O2 -o "$T/as" "$T/as.c" || skip "no C compiler"
	run -- "$T/as"
	[ "$RC" = 0 ] || fail "status $RC"
	grep -q "ran under 8 MiB" "$T/out" "$T/err" || fail "the program did not run"
	grep -rq "RLIMIT_AS (8192 KiB) leaves no room" "$T/err" "$T/report.txt" "$T/s" ||
		fail "no message about RLIMIT_AS"
	;;
no_tls_slot)
	# The private libunwind takes no TLS module id (its PT_TLS is removed
	# when it is copied): dl_iterate_phdr shows it with dlpi_tls_modid 0.
	cat >"$T/tls.c" <<'EOC'
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <string.h>
static int cb(struct dl_phdr_info *i, size_t n, void *d)
{
	(void)n;
	(void)d;
	if (strstr(i->dlpi_name, "libcbn_unwd"))
		printf("libcbn_unwd modid %zu\n", i->dlpi_tls_modid);
	return 0;
}
int main(void)
{
	dl_iterate_phdr(cb, NULL);
	return 0;
}
EOC
	cc -O2 -o "$T/tls" "$T/tls.c" || skip "no C compiler"
	run -- "$T/tls"
	grep -q '^libcbn_unwd modid 0$' "$T/out" "$T/err" ||
		fail "libcbn_unwd.so has a TLS module id: $(cat "$T/out")"
	;;
ctl_leftover)
	# A child with a control socket ends with _exit (its exit handler that
	# removes the socket does not run): nothing left in the kept session.
	run -- env CBN_CTL=1 "$H/exit_paths" sysexit_main
	[ ! -e "$T/s/ctl" ] || { ls -la "$T/s/ctl"; fail "ctl sockets left in the session"; }
	;;
*)
	fail "unknown case"
	;;
esac
echo "PASS: $CASE"
