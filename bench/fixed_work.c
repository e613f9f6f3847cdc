/*
 * fixed_work.c — the shapes of the CPU examples (split, threads, recursion) doing
 * a fixed amount of work instead of burning a fixed amount of CPU time.  The
 * examples stop at a CPU-time deadline, so time a profiler steals inside the
 * thread (signal delivery, unwinding) does not lengthen them; these do, so
 * their wall and CPU time show the whole cost of profiling.
 * Usage: fixed_work split|threads|recursion [SCALE]   (SCALE 1 ~ 1 s here)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITERS_PER_SCALE 700000000ull   /* ~1 s of LCG steps on the bench VM */

static volatile uint64_t sink;

/* n dependent multiply-adds: the compiler cannot vectorize or drop them. */
#define WORK(n)                                                                         \
	do {                                                                            \
		uint64_t x_ = sink;                                                     \
		for (uint64_t i_ = 0; i_ < (n); i_++) {                                 \
			x_ = x_ * 6364136223846793005ull + 1442695040888963407ull;      \
			__asm__ volatile("" : "+r"(x_));                                \
		}                                                                       \
		sink += x_;                                                             \
	} while (0)

__attribute__((noinline)) void light(uint64_t n)
{
	WORK(n);
}

__attribute__((noinline)) void heavy(uint64_t n)
{
	WORK(n);
}

static void split(uint64_t total)
{
	uint64_t rounds = 50 + 1, unit = total / rounds / 4;

	for (uint64_t r = 0; r < rounds; r++) {
		light(unit);
		heavy(3 * unit);
	}
}

static uint64_t thread_unit;

__attribute__((noinline)) void worker_spin(uint64_t n)
{
	WORK(n);
}

static void *worker(void *arg)
{
	worker_spin(thread_unit * (uint64_t)(uintptr_t)arg);
	return NULL;
}

static void threads(uint64_t total)
{
	pthread_t t[4];

	/* workers do 1..4 units, main 1: 11 units in all */
	thread_unit = total / 11;
	for (uintptr_t i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, worker, (void *)(i + 1));
	worker_spin(thread_unit);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
}

__attribute__((noinline)) int recurse(int depth, uint64_t n)
{
	int r;

	WORK(n);
	if (depth == 0) {
		WORK(n * 20);
		return 0;
	}
	r = recurse(depth - 1, n);
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

static void recursion(uint64_t total)
{
	/* 200 levels of n each plus 20 n at the leaf, per descent */
	uint64_t descents = 100, n = total / descents / 220;

	for (uint64_t d = 0; d < descents; d++)
		recurse(200, n);
}

int main(int argc, char **argv)
{
	double scale = argc > 2 ? atof(argv[2]) : 1.0;
	uint64_t total = (uint64_t)(scale * (double)ITERS_PER_SCALE);

	if (argc < 2 || scale <= 0) {
		fprintf(stderr, "usage: fixed_work split|threads|recursion [SCALE]\n");
		return 2;
	}
	if (strcmp(argv[1], "split") == 0)
		split(total);
	else if (strcmp(argv[1], "threads") == 0)
		threads(total);
	else if (strcmp(argv[1], "recursion") == 0)
		recursion(total);
	else {
		fprintf(stderr, "fixed_work: unknown shape '%s'\n", argv[1]);
		return 2;
	}
	printf("fixed_work %s: done\n", argv[1]);
	return 0;
}
