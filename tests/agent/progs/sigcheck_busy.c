/*
 * sigcheck_busy — the program the signal-path check runs at a high rate: four
 * threads that allocate, reallocate, free and take a shared mutex in a tight
 * loop, between bursts of plain CPU, plus short-lived threads started all
 * along (their begin and end run the agent's thread bookkeeping).  Samples
 * land inside malloc and pthread_mutex_lock all the time, which must not
 * trip the check: only calls made by the handler itself do.
 * Usage: sigcheck_busy [SECONDS]; prints which library's malloc it calls on
 * stderr, and "ok" on stdout.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile uint64_t shared_sum;
static double seconds = 1.0;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static uint64_t busy_spin(uint64_t x, int n)
{
	int i;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

__attribute__((noinline)) static void busy_alloc(uint64_t *seed)
{
	void *p[16];
	int i;

	for (i = 0; i < 16; i++) {
		size_t n = 16 + (size_t)((*seed >> 33) % 4096);

		*seed = busy_spin(*seed, 8);
		p[i] = (i & 1) ? calloc(1, n) : malloc(n);
		if (p[i])
			memset(p[i], i, n < 64 ? n : 64);
		if (i % 4 == 3) {
			void *q = realloc(p[i], n * 2);

			if (q)
				p[i] = q;
		}
	}
	for (i = 0; i < 16; i++)
		free(p[i]);
}

__attribute__((noinline)) static void busy_lock(uint64_t x)
{
	pthread_mutex_lock(&lock);
	shared_sum += busy_spin(x, 64);
	pthread_mutex_unlock(&lock);
}

static void *short_lived(void *arg)
{
	free(malloc(128));
	return arg;
}

static void *worker(void *arg)
{
	uint64_t seed = (uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1;
	double end = now() + seconds;
	long round = 0;

	while (now() < end) {
		busy_alloc(&seed);
		busy_lock(seed);
		seed = busy_spin(seed, 2000);
		if (++round % 2000 == 0) {
			pthread_t t;

			if (pthread_create(&t, NULL, short_lived, NULL) == 0)
				pthread_join(t, NULL);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[4];
	Dl_info di;
	void *m;
	int i;

	if (argc > 1)
		seconds = atof(argv[1]);
	m = dlsym(RTLD_DEFAULT, "malloc");
	fprintf(stderr, "malloc from %s\n", m && dladdr(m, &di) && di.dli_fname ? di.dli_fname : "?");
	for (i = 0; i < 4; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1)) != 0)
			return 2;
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	printf("ok\n");
	return 0;
}
