/*
 * small_stack_thread.c — a thread created with the smallest stack glibc allows
 * (pthread_attr_setstacksize 16384) recurses about 4 KiB deep and burns CPU
 * there.  Must hold: it finishes and returns its result, as without the
 * profiler (a signal handler running on that stack must fit in what is left).
 */
#include <pthread.h>

#include "hostile.h"

/* 8 levels of ~512-byte frames: about 4 KiB of the thread's own stack. */
static HOSTILE_FN uint64_t level(int depth)
{
	volatile char pad[480];
	uint64_t r;

	pad[0] = (char)depth;
	pad[sizeof(pad) - 1] = 1;
	if (depth == 0) {
		double end = thread_cpu() + 0.5;

		r = 1;
		while (thread_cpu() < end)
			r = burn_chunk(r);
		r = 42;
	} else {
		r = level(depth - 1);
	}
	return r + (uint64_t)pad[sizeof(pad) - 1] - 1;
}

static void *worker(void *arg)
{
	(void)arg;
	return (void *)(uintptr_t)level(8);
}

int main(void)
{
	pthread_attr_t a;
	pthread_t t;
	void *ret;
	int e;

	print_views("start");
	pthread_attr_init(&a);
	e = pthread_attr_setstacksize(&a, 16384);
	if (e)
		die("pthread_attr_setstacksize: %d", e);
	e = pthread_create(&t, &a, worker, NULL);
	if (e) {
		errno = e;
		die("pthread_create");
	}
	pthread_join(t, &ret);
	say("worker returned %lu\n", (unsigned long)(uintptr_t)ret);
	print_views("end");
	return 0;
}
