/*
 * crash_abort.c — burns CPU with SIGABRT blocked and then calls abort().
 * Must hold: the process dies of SIGABRT (status 134) even though the signal
 * was blocked (abort unblocks it), as without the profiler.
 */
#include "hostile.h"

int main(void)
{
	sigset_t s;

	print_views("start");
	sigemptyset(&s);
	sigaddset(&s, SIGABRT);
	sigprocmask(SIG_BLOCK, &s, NULL);
	burn_cpu_deep(0.4, 8);
	print_signals("before-abort");
	say("aborting now\n");
	abort();
}
