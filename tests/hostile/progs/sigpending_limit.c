/*
 * sigpending_limit.c — RLIMIT_SIGPENDING set low, then the program execs
 * itself (so that the profiler starts under the limit too) and burns CPU.
 * MODE zero: the limit is 0 (no real-time signal can be queued).  MODE
 * small: the limit is what the user's processes have pending now (SigQ:
 * the count is per user, and other processes of the user count) plus 8;
 * the program blocks SIGRTMIN, queues 8 of them to itself with values,
 * burns 0.4 s (the queue full: a perf event's signal cannot be queued),
 * unblocks and checks what arrives.  Must
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
	int queued = 0, expect = 0;

	burn_cpu_deep(0.3, 8);
	if (!strcmp(mode, "small")) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_rt;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGRTMIN, &sa, NULL);
		sigemptyset(&set);
		sigaddset(&set, SIGRTMIN);
		sigprocmask(SIG_BLOCK, &set, NULL);
		/* Until the queue is full (8 at most): other processes of the user
		 * share the count, so how many fit may differ from run to run. */
		for (int i = 1; i <= 8; i++) {
			union sigval v = {.sival_int = i};

			if (sigqueue(getpid(), SIGRTMIN, v))
				break;
			queued++;
			expect += i;
		}
		burn_cpu_deep(0.4, 8);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		say("received every one it queued, with its value: %s\n",
		    got == queued && sum == expect && queued > 0 ? "yes" : "no");
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
	rl.rlim_cur = rl.rlim_max = 0;
	if (strcmp(mode, "zero")) {
		char buf[256];
		unsigned long used = 0, lim;
		FILE *f = fopen("/proc/self/status", "r");

		while (f && fgets(buf, sizeof(buf), f))
			if (sscanf(buf, "SigQ: %lu/%lu", &used, &lim) == 2)
				break;
		if (f)
			fclose(f);
		rl.rlim_cur = rl.rlim_max = used + 8;
	}
	if (setrlimit(RLIMIT_SIGPENDING, &rl))
		die("setrlimit");
	say("RLIMIT_SIGPENDING %s; exec\n", rl.rlim_cur ? "what is pending + 8" : "0");
	execl("/proc/self/exe", argv[0], mode, "run", (char *)NULL);
	die("exec");
}
