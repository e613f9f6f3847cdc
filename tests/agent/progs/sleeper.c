/*
 * sleeper.c — sleeps between CPU bursts and checks every sleep is whole:
 * usleep and nanosleep are never restarted after a signal (signal(7)), so a
 * profiler that interrupts sleeping threads makes them fail with EINTR.  Also
 * checks errno survives the samples taken during the bursts.
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	volatile unsigned long x = 1;
	int i, bad = 0;

	for (i = 0; i < 10; i++) {
		double t0, end = now(CLOCK_THREAD_CPUTIME_ID) + 0.02;
		struct timespec req = {0, 20000000};

		errno = EDOM;
		while (now(CLOCK_THREAD_CPUTIME_ID) < end)
			for (int k = 0; k < 10000; k++)
				x = x * 6364136223846793005ul + 1;
		if (errno != EDOM)
			bad |= 1;
		t0 = now(CLOCK_MONOTONIC);
		if (usleep(20000) != 0)
			bad |= 2;
		if (nanosleep(&req, NULL) != 0)
			bad |= 4;
		if (now(CLOCK_MONOTONIC) - t0 < 0.039)
			bad |= 8;
	}
	printf("sleeper: %s (%d)\n", bad ? "FAILED" : "ok", bad);
	return bad ? 1 : 0;
}
