/*
 * sigpending_limit.c — RLIMIT_SIGPENDING set low, then the program execs
 * itself (so that the profiler starts under the limit too) and burns CPU.
 * MODE zero: the limit is 0 (no real-time signal can be queued).  MODE
 * small: the limit is 16; the program blocks SIGRTMIN, queues 8 of them to
 * itself with values, burns 0.4 s, unblocks and counts what arrives.  Must
 * hold: the same output and status.  Before: the perf event's real-time
 * signal could not be queued, the kernel sent SIGIO instead, and SIGIO
 * killed the program (status 157).
 */
#include <signal.h>

#include "hostile.h"

static volatile int got, sum;

static void on_rt(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	got++;
	sum += si->si_value.sival_int;
}

static void run(const char *mode)
{
	struct sigaction sa;
	sigset_t set;

	burn_cpu_deep(0.3, 8);
	if (!strcmp(mode, "small")) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_rt;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGRTMIN, &sa, NULL);
		sigemptyset(&set);
		sigaddset(&set, SIGRTMIN);
		sigprocmask(SIG_BLOCK, &set, NULL);
		for (int i = 1; i <= 8; i++) {
			union sigval v = {.sival_int = i};

			if (sigqueue(getpid(), SIGRTMIN, v))
				say("sigqueue %d: %s\n", i, strerrorname_np(errno));
		}
		burn_cpu_deep(0.4, 8);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		say("received %d, values sum %d\n", got, sum);
	}
	say("%s: done\n", mode);
}

int main(int argc, char **argv)
{
	struct rlimit rl;
	const char *mode = argc > 1 ? argv[1] : "zero";

	if (argc > 2) {
		run(mode);
		return 0;
	}
	rl.rlim_cur = rl.rlim_max = !strcmp(mode, "zero") ? 0 : 16;
	if (setrlimit(RLIMIT_SIGPENDING, &rl))
		die("setrlimit");
	say("RLIMIT_SIGPENDING %lu; exec\n", (unsigned long)rl.rlim_cur);
	execl("/proc/self/exe", argv[0], mode, "run", (char *)NULL);
	die("exec");
}
