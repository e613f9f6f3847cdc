/*
 * burn.c — N threads that each burn S seconds of their own CPU time in a few
 * small functions, for sampling-rate measurements (bench/sampler.sh).
 * Usage: burn N S
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double secs;
static volatile uint64_t sink;

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static uint64_t step(uint64_t x)
{
	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

static void *worker(void *arg)
{
	double end = cpu_now() + secs;
	uint64_t x = (uintptr_t)arg;

	/* The clock is a system call: read it every 64 steps (~1 ms), so the
	 * threads spend almost all their CPU in user mode. */
	while (cpu_now() < end)
		for (int i = 0; i < 64; i++)
			x = step(x);
	sink += x;
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1, i;
	pthread_t *th;

	secs = argc > 2 ? atof(argv[2]) : 1.0;
	th = calloc((size_t)n, sizeof(*th));
	if (!th)
		return 1;
	for (i = 0; i < n; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
