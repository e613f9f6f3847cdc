/*
 * deep_recursion.c — a thread with a 64 MiB stack recurses 100 000 frames deep
 * and burns CPU on the way down and at the bottom.  Must hold: the recursion
 * completes with the right result, as without the profiler (whose unwinder
 * must stop at its depth limit rather than walk 100 000 frames).
 */
#include <pthread.h>

#include "hostile.h"

#define DEPTH 100000

static HOSTILE_FN uint64_t down(int depth, uint64_t acc)
{
	volatile uint64_t keep = acc;

	if ((depth & 511) == 0)
		acc = burn_chunk(acc) & 0xff;
	if (depth == DEPTH) {
		burn_cpu(0.4);
		return (uint64_t)depth;
	}
	return down(depth + 1, acc + 1) + keep - acc + 1;
}

static void *worker(void *arg)
{
	uint64_t *out = arg;
	double end = thread_cpu() + 0.2;

	*out = 0;
	do
		*out = down(1, 0);
	while (thread_cpu() < end);
	return NULL;
}

int main(void)
{
	pthread_attr_t a;
	pthread_t t;
	uint64_t r;

	print_views("start");
	pthread_attr_init(&a);
	if (pthread_attr_setstacksize(&a, 64u << 20))
		die("pthread_attr_setstacksize");
	if (pthread_create(&t, &a, worker, &r))
		die("pthread_create");
	pthread_join(t, NULL);
	say("depth=%d result=%llu\n", DEPTH, (unsigned long long)r);
	print_views("end");
	return 0;
}
