/*
 * sysv_signal.c — built as strict C11 (no _GNU_SOURCE), where signal() has
 * System V semantics (glibc's __sysv_signal: reset to SIG_DFL on delivery,
 * signal not blocked in the handler).  Handlers for SIGUSR2 and SIGPROF
 * re-install themselves; 200 raises each with CPU between.  Must hold: the
 * reset is seen every time, as without the profiler.  (Does not use hostile.h,
 * which needs _GNU_SOURCE.)
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t calls[2], reset_seen[2], blocked_inside[2];

static void on_sig(int sig)
{
	int k = sig == SIGPROF;
	void (*prev)(int);
	sigset_t m;

	calls[k]++;
	sigprocmask(SIG_BLOCK, NULL, &m);
	if (sigismember(&m, sig) == 1)
		blocked_inside[k]++;
	prev = signal(sig, on_sig); /* re-install, and learn what was there */
	if (prev == SIG_DFL)
		reset_seen[k]++;
}

static void burn(void)
{
	struct timespec a, b;
	volatile uint64_t v = 1;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 20000; i++)
			v = v * 6364136223846793005ull + 1;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 1500000L);
}

int main(void)
{
	if (signal(SIGUSR2, on_sig) == SIG_ERR || signal(SIGPROF, on_sig) == SIG_ERR)
		return 1;
	for (int i = 0; i < 200; i++) {
		burn();
		raise(SIGUSR2);
		burn();
		raise(SIGPROF);
	}
	printf("USR2: calls=%d reset_seen=%d blocked_inside=%d\n", (int)calls[0],
	       (int)reset_seen[0], (int)blocked_inside[0]);
	printf("PROF: calls=%d reset_seen=%d blocked_inside=%d\n", (int)calls[1],
	       (int)reset_seen[1], (int)blocked_inside[1]);
	printf("still installed: USR2=%s PROF=%s\n",
	       signal(SIGUSR2, SIG_DFL) == on_sig ? "yes" : "no",
	       signal(SIGPROF, SIG_DFL) == on_sig ? "yes" : "no");
	return 0;
}
