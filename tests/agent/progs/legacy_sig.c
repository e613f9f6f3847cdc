/*
 * legacy_sig.c — SysV-style SIGPROF use, built with a strict -std=c11 so that
 * signal() is really __sysv_signal (one-shot handlers that re-install
 * themselves), plus sighold/sigrelse around a held signal that must arrive
 * exactly when released.  Prints "legacy_sig: ok" or what went wrong.
 */
#define _XOPEN_SOURCE 700
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static volatile sig_atomic_t hits;

static void on_prof(int sig)
{
	hits++;
	signal(sig, on_prof); /* SysV: the handler was reset to SIG_DFL */
}

static void burn(double seconds)
{
	struct timespec ts;
	volatile unsigned long x = 1;
	double end;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	end = ts.tv_sec + ts.tv_nsec / 1e9 + seconds;
	do {
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ul + 1;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	} while (ts.tv_sec + ts.tv_nsec / 1e9 < end);
}

int main(void)
{
	struct itimerval it = {{0, 5000}, {0, 5000}};
	struct sigaction back;
	sigset_t cur;
	int held;

	if (signal(SIGPROF, on_prof) == SIG_ERR) {
		printf("legacy_sig: signal failed\n");
		return 1;
	}
	if (sigaction(SIGPROF, NULL, &back) < 0 || back.sa_handler != on_prof) {
		printf("legacy_sig: handler not reported back\n");
		return 1;
	}
	setitimer(ITIMER_PROF, &it, NULL);
	burn(0.25);
	if (hits < 10) {
		printf("legacy_sig: only %d signals\n", (int)hits);
		return 1;
	}
	sighold(SIGPROF);
	sigprocmask(SIG_BLOCK, NULL, &cur);
	if (!sigismember(&cur, SIGPROF)) {
		printf("legacy_sig: sighold not visible in the mask\n");
		return 1;
	}
	held = hits;
	burn(0.1);
	if (hits != held) {
		printf("legacy_sig: %d signals delivered while held\n", (int)(hits - held));
		return 1;
	}
	sigrelse(SIGPROF);
	/* The held one, at once.  A second can follow it: the timer counts the
	 * process's CPU, and any other thread's (a profiler's) moves its next
	 * expiry to any moment, this one included. */
	if (hits != held + 1 && hits != held + 2) {
		printf("legacy_sig: %d signals at release, expected 1\n", (int)(hits - held));
		return 1;
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_PROF, &it, NULL);
	printf("legacy_sig: ok\n");
	return 0;
}
