/*
 * sigwaitinfo_timer.c prof|alrm — blocks SIGPROF (or SIGALRM), arms
 * setitimer(ITIMER_PROF) (or ITIMER_REAL) at 20 ms and takes 20 signals with
 * sigwaitinfo, burning CPU in between.  Must hold: received=20, eintr=0,
 * lost=0, every signal from the timer, as without the profiler.
 */
#include "timersig.h"

int main(int argc, char **argv)
{
	struct timersig t;
	siginfo_t si;
	int lost = 0, misses = 0;

	if (argc != 2)
		die("usage: sigwaitinfo_timer prof|alrm");
	print_views("start");
	timersig_start(&t, argv[1]);
	while (t.received < TS_WANT && misses < 3) {
		if (t.sig == SIGPROF) {
			/* ITIMER_PROF only advances while we run: burn until the
			 * signal is pending (a wait without one would never end).
			 * 50 periods without one: count it lost.  (Not 10: on a
			 * machine kept busy by others the kernel delivered one
			 * after more than 10 periods, without any profiler.) */
			double end = thread_cpu() + 1.0;
			uint64_t x = 1;

			while (!timersig_pending(&t) && thread_cpu() < end)
				x = burn_chunk(x);
			if (!timersig_pending(&t)) {
				lost++;
				misses++;
				continue;
			}
			misses = 0;
		} else {
			/* Sometimes the signal is already pending, sometimes the
			 * wait blocks for it. */
			burn_cpu(t.received & 1 ? 0.012 : 0.03);
		}
		if (sigwaitinfo(&t.set, &si) == t.sig)
			timersig_got(&t, &si);
		else if (errno == EINTR)
			t.eintr++;
		else
			die("sigwaitinfo");
	}
	timersig_stop(&t);
	timersig_report(&t, lost);
	print_views("end");
	return 0;
}
