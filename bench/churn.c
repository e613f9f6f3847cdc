/*
 * churn.c — thread creation cost: creates and joins N threads that do nothing,
 * and prints the wall time per thread in microseconds.  bench/sampler.sh runs
 * it plainly and under the agent.  Usage: churn [N]   (default 5000)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void *nothing(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5000, i;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, nothing, NULL) != 0)
			return 1;
		pthread_join(t, NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.3f\n", ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) /
				 1e3 / n);
	return 0;
}
