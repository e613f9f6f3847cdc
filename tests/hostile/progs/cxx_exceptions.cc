/*
 * cxx_exceptions.cc — four threads throw C++ exceptions through 20 frames and
 * catch them at the top, in a loop, burning CPU in every frame.  Must hold:
 * every exception is caught where it should be, with its value, as without
 * the profiler (the unwinder of the program and the profiler's must coexist).
 */
#include <pthread.h>
#include <stdexcept>

#include "hostile.h"

#define THREADS 4
#define ROUNDS 250

struct boom {
	int depth;
	long value;
};

static HOSTILE_FN long frame(int depth, long v)
{
	volatile long keep = v;

	burn_chunk((uint64_t)v);
	if (depth == 20)
		throw boom{depth, v};
	return frame(depth + 1, v + 1) + keep - v;
}

struct res {
	int idx, caught, wrong;
};

static void *worker(void *arg)
{
	res *r = static_cast<res *>(arg);

	for (int i = 0; i < ROUNDS; i++) {
		try {
			frame(1, (long)i * 100);
			r->wrong++;
		} catch (const boom &b) {
			if (b.depth == 20 && b.value == (long)i * 100 + 19)
				r->caught++;
			else
				r->wrong++;
		}
		if (i % 50 == 0) {
			try {
				throw std::runtime_error("std");
			} catch (const std::exception &e) {
				if (strcmp(e.what(), "std"))
					r->wrong++;
			}
		}
	}
	return nullptr;
}

int main()
{
	pthread_t t[THREADS];
	res r[THREADS];

	print_views("start");
	for (int i = 0; i < THREADS; i++) {
		r[i] = res{i, 0, 0};
		if (pthread_create(&t[i], nullptr, worker, &r[i]))
			die("pthread_create");
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], nullptr);
		say("thread %d: caught=%d wrong=%d\n", i, r[i].caught, r[i].wrong);
	}
	print_views("end");
	return 0;
}
