/*
 * libunwind_user.c — a program that links libunwind.so.8 itself (as servers
 * and crash reporters do) and calls unw_backtrace from three threads at the
 * bottom of deep call chains through 1024 different functions (so libunwind
 * keeps filling its caches, under its own lock), for about a second of CPU.
 * Must hold: it finishes and every backtrace is as deep as the chain, as
 * without the profiler (which uses the same libunwind instance).
 */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>

#include "manyfuncs.h"

#define THREADS 3
#define ROUNDS 2500

static __thread int last_depth;

static uint64_t take_backtrace(uint64_t x)
{
	void *pcs[512];

	last_depth = unw_backtrace(pcs, 512);
	return x + (uint64_t)last_depth;
}

struct res {
	int idx;
	int shallow; /* backtraces shorter than the chain */
	int done;
};

static void *worker(void *arg)
{
	struct res *res = arg;
	uint64_t x = (uint64_t)res->idx * 977 + 1;

	for (int i = 0; i < ROUNDS; i++) {
		int depth = 20 + (i * 37 + res->idx * 11) % 180;

		x = mf_table[(x >> 23) & 1023](depth, x);
		if (last_depth < depth)
			res->shallow++;
		res->done++;
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	struct res r[THREADS];

	print_views("start");
	mf_leaf = take_backtrace;
	for (int i = 0; i < THREADS; i++) {
		r[i] = (struct res){i, 0, 0};
		if (pthread_create(&t[i], NULL, worker, &r[i]))
			die("pthread_create");
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		say("thread %d: backtraces=%d shorter_than_chain=%d\n", i, r[i].done, r[i].shallow);
	}
	print_views("end");
	return 0;
}
