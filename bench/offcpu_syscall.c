/*
 * offcpu_syscall.c — a syscall-heavy program doing a fixed amount of work, for
 * bench/offcpu.sh: two threads bounce a byte over a pair of pipes ITERS times
 * (50 000 x SCALE round trips, each a blocking read on either side), while a
 * third thread takes ITERS / 10 short sleeps (nanosleep 20 us) and polls.
 * Nearly all of it is system calls and blocking; the work is fixed, so time
 * the profiler steals shows in both wall and CPU time.
 * Usage: offcpu_syscall [SCALE]   (SCALE 1 ~ 0.5-1 s)
 */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];
static long iters;

static void *echo(void *arg)
{
	char c;

	(void)arg;
	for (long i = 0; i < iters; i++) {
		if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1)
			exit(1);
	}
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (long i = 0; i < iters / 10; i++) {
		struct timespec us20 = {0, 20000};

		nanosleep(&us20, NULL);
		poll(NULL, 0, 0);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double scale = argc > 1 ? atof(argv[1]) : 1;
	pthread_t e, s;
	long sum = 0;
	char c = 0;

	if (scale <= 0)
		scale = 1;
	iters = (long)(50000 * scale);
	if (pipe(ping) < 0 || pipe(pong) < 0 || pthread_create(&e, NULL, echo, NULL) ||
	    pthread_create(&s, NULL, sleeper, NULL))
		return 1;
	for (long i = 0; i < iters; i++) {
		c = (char)i;
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			return 1;
		sum += c;
	}
	pthread_join(e, NULL);
	pthread_join(s, NULL);
	printf("offcpu_syscall: %ld round trips, %ld\n", iters, sum);
	return 0;
}
