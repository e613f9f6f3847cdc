/*
 * own_sigprof_itimer.c — the program's own SIGPROF handler driven by its own
 * setitimer(ITIMER_PROF, 10 ms) during 0.5 s of CPU (what gprof's profil and
 * gperftools do).  Must hold: signals reach the handler (1..100; about 50 on
 * an idle machine), sigaction reads back the program's handler, as without
 * the profiler.  The lower bound is not 25: the kernel checks a process CPU
 * timer at the ticks the process runs through and sends one signal for the
 * periods that expired meanwhile, so on a loaded machine only 5-12 of the 50
 * reach the handler, profiled or not (stress-ng --cpu 4: ten runs of each).
 */
#include <sys/time.h>

#include "hostile.h"

static volatile sig_atomic_t hits;

static void on_prof(int sig)
{
	(void)sig;
	hits++;
}

int main(void)
{
	struct sigaction sa, back;
	struct itimerval it = {{0, 10000}, {0, 10000}}, off;

	print_views("start");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_prof;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGPROF, &sa, NULL) < 0)
		die("sigaction");
	if (setitimer(ITIMER_PROF, &it, NULL) < 0)
		die("setitimer");
	burn_cpu_deep(0.5, 8);
	memset(&off, 0, sizeof(off));
	setitimer(ITIMER_PROF, &off, NULL);
	sigaction(SIGPROF, NULL, &back);
	say("handler read back: %s flags_restart=%d\n",
	    back.sa_handler == on_prof ? "own" : "other", !!(back.sa_flags & SA_RESTART));
	say("signals in 0.5 s of CPU at 10 ms: %s\n",
	    hits >= 1 && hits <= 100 ? "ok (1..100)" : "out of range");
	if (hits < 1 || hits > 100)
		fprintf(stderr, "own_sigprof_itimer: %d signals\n", (int)hits);
	print_views("end");
	return 0;
}
