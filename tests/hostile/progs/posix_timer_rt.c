/*
 * posix_timer_rt.c — the program's own POSIX timer: timer_create on
 * CLOCK_PROCESS_CPUTIME_ID with SIGEV_SIGNAL SIGRTMIN+1 and a value, every
 * 10 ms during 0.5 s of CPU.  Must hold: about 50 expirations (signals plus
 * overruns, 5..100: a plain run beside stress-ng counted 16) all with
 * SI_TIMER and the program's value, as without the profiler.
 */
#include "hostile.h"

#define VALUE 4242

static volatile sig_atomic_t hits, overruns, wrong;

static void on_timer(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_code != SI_TIMER || si->si_value.sival_int != VALUE) {
		wrong++;
		return;
	}
	hits++;
	overruns += si->si_overrun;
}

int main(void)
{
	struct sigaction sa;
	struct sigevent sev;
	struct itimerspec its = {{0, 10000000}, {0, 10000000}};
	timer_t t;
	int total;

	print_views("start");
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_timer;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGRTMIN + 1, &sa, NULL) < 0)
		die("sigaction");
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGRTMIN + 1;
	sev.sigev_value.sival_int = VALUE;
	if (timer_create(CLOCK_PROCESS_CPUTIME_ID, &sev, &t) < 0)
		die("timer_create");
	if (timer_settime(t, 0, &its, NULL) < 0)
		die("timer_settime");
	burn_cpu_deep(0.5, 8);
	timer_delete(t);
	total = hits + overruns;
	say("expirations in 0.5 s of CPU at 10 ms: %s, foreign signals=%d\n",
	    total >= 5 && total <= 100 ? "ok (5..100)" : "out of range", (int)wrong);
	if (total < 5 || total > 100)
		fprintf(stderr, "posix_timer_rt: %d signals + %d overruns\n", (int)hits,
		        (int)overruns);
	print_views("end");
	return 0;
}
