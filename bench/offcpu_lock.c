/*
 * offcpu_lock.c — a lock-heavy program doing a fixed amount of work, for
 * bench/offcpu.sh: THREADS threads (4) each take one shared mutex ITERS times
 * (200 000 x SCALE), do 200 steps of work inside and 600 outside, so they
 * keep blocking in futex waits for each other.  The work is fixed, so time the
 * profiler steals shows in both wall and CPU time.
 * Usage: offcpu_lock [SCALE] [THREADS]   (SCALE 1 ~ 0.5-1 s on 2 cores)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t shared; /* under lock */
static long iters;

static uint64_t work(uint64_t x, int n)
{
	for (int i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static void *worker(void *arg)
{
	uint64_t x = (uint64_t)(uintptr_t)arg;

	for (long i = 0; i < iters; i++) {
		pthread_mutex_lock(&lock);
		shared = work(shared + x, 200);
		pthread_mutex_unlock(&lock);
		x = work(x, 600);
	}
	return (void *)(uintptr_t)x;
}

int main(int argc, char **argv)
{
	double scale = argc > 1 ? atof(argv[1]) : 1;
	int n = argc > 2 ? atoi(argv[2]) : 4;
	pthread_t th[64];

	if (scale <= 0)
		scale = 1;
	if (n < 1 || n > 64)
		n = 4;
	iters = (long)(200000 * scale);
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1)))
			return 1;
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	printf("offcpu_lock: %d threads x %ld, %016llx\n", n, iters, (unsigned long long)shared);
	return 0;
}
