/*
 * threads64.c — 64 threads each burn 10 ms of CPU in small steps and report
 * their progress.  Must hold: all 64 made all their progress, as without the
 * profiler (none starved, crashed or lost).
 */
#include <pthread.h>

#include "hostile.h"

#define N 64
#define STEPS 20

static int progress[N];

static void *worker(void *arg)
{
	int *p = arg;

	for (int i = 0; i < STEPS; i++) {
		burn_cpu(0.0005);
		__atomic_add_fetch(p, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[N];
	int full = 0, total = 0;

	print_views("start");
	for (int i = 0; i < N; i++)
		if (pthread_create(&t[i], NULL, worker, &progress[i]))
			die("pthread_create");
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < N; i++) {
		total += progress[i];
		full += progress[i] == STEPS;
	}
	say("threads_with_progress=%d steps=%d\n", full, total);
	print_views("end");
	return 0;
}
