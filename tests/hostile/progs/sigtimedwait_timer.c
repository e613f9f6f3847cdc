/*
 * sigtimedwait_timer.c prof|alrm — blocks SIGPROF (or SIGALRM), arms
 * setitimer(ITIMER_PROF) (or ITIMER_REAL) at 20 ms, and polls with
 * sigtimedwait (10 ms timeout) between 10 ms bursts of CPU until 20 signals
 * came.  Must hold: received=20, eintr=0, as without the profiler.
 */
#include "timersig.h"

int main(int argc, char **argv)
{
	struct timersig t;
	struct timespec tmo = {0, 10 * 1000 * 1000};
	siginfo_t si;
	double budget;

	if (argc != 2)
		die("usage: sigtimedwait_timer prof|alrm");
	print_views("start");
	timersig_start(&t, argv[1]);
	/* About 0.4 s of CPU makes 20 signals; give up at 2.5 times that. */
	budget = thread_cpu() + TS_BUDGET;
	while (t.received < TS_WANT && thread_cpu() < budget) {
		burn_cpu(t.sig == SIGPROF ? 0.01 : 0.02);
		if (sigtimedwait(&t.set, &si, &tmo) == t.sig)
			timersig_got(&t, &si);
		else if (errno == EINTR)
			t.eintr++;
		else if (errno != EAGAIN)
			die("sigtimedwait");
	}
	timersig_stop(&t);
	timersig_report(&t, TS_WANT - t.received);
	print_views("end");
	return 0;
}
