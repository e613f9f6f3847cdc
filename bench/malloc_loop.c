/*
 * malloc_loop.c — a pure malloc/free loop for bench/memory_loop.sh: a fixed
 * number of operations, each freeing a block and allocating another of a
 * random size from 16 to 4096 bytes (log-uniform: as many blocks under 64
 * bytes as over 1 KiB, as a program's are), with mixed lifetimes: a ring of
 * short-lived blocks replaced at every operation and, every 16th operation,
 * one of a larger set of long-lived ones.  One byte of each block is written.
 * The same seed every run, so every run does the same work.  With "hot", each
 * operation allocates a block of 16..271 bytes and frees it at once, all in
 * the cache: what a call costs, and nothing of the memory's.  Prints its own
 * time, the loop's only (not start-up):
 *
 *   malloc_loop: ops N ns_per_op X ms T
 *
 * Usage: malloc_loop [OPS [hot]]   (default 20000000)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SHORT 256
#define LONG 16384

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

/* 16..4096 bytes, log-uniform over the powers of two. */
static size_t draw_size(void)
{
	uint64_t r = next();
	unsigned e = 4 + (unsigned)(r % 8);          /* 2^4 .. 2^11 */
	size_t lo = (size_t)1 << e;

	return lo + (size_t)((r >> 8) % (lo + 1));   /* lo .. 2 lo */
}

static void *get(void)
{
	size_t n = draw_size();
	char *p = malloc(n);

	if (!p) {
		fprintf(stderr, "malloc_loop: out of memory\n");
		exit(1);
	}
	p[n - 1] = (char)n;
	return p;
}

static double now_ms(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void hot(long ops)
{
	char *volatile keep;
	long i;

	for (i = 0; i < ops; i++) {
		keep = malloc(16 + (size_t)(i & 255));
		keep[0] = 1;
		free(keep);
	}
}

int main(int argc, char **argv)
{
	static void *shortl[SHORT], *longl[LONG];
	long ops = argc > 1 ? atol(argv[1]) : 20000000L;
	int is_hot = argc > 2 && strcmp(argv[2], "hot") == 0;
	double t0, t1, c0, c1;
	long i;

	if (ops <= 0 || (argc > 2 && !is_hot)) {
		fprintf(stderr, "usage: malloc_loop [OPS [hot]]\n");
		return 2;
	}
	if (is_hot) {
		c0 = now_ms(CLOCK_THREAD_CPUTIME_ID);
		t0 = now_ms(CLOCK_MONOTONIC);
		hot(ops);
		t1 = now_ms(CLOCK_MONOTONIC);
		c1 = now_ms(CLOCK_THREAD_CPUTIME_ID);
		goto out;
	}
	for (i = 0; i < LONG; i++)
		longl[i] = get();
	for (i = 0; i < SHORT; i++)
		shortl[i] = get();
	c0 = now_ms(CLOCK_THREAD_CPUTIME_ID);
	t0 = now_ms(CLOCK_MONOTONIC);
	for (i = 0; i < ops; i++) {
		void **slot = (i & 15) == 0 ? &longl[next() % LONG] : &shortl[i % SHORT];

		free(*slot);
		*slot = get();
	}
	t1 = now_ms(CLOCK_MONOTONIC);
	c1 = now_ms(CLOCK_THREAD_CPUTIME_ID);
	for (i = 0; i < LONG; i++)
		free(longl[i]);
	for (i = 0; i < SHORT; i++)
		free(shortl[i]);
out:
	printf("malloc_loop: ops %ld ns_per_op %.2f ms %.1f cpu_ms %.1f\n", ops,
	       (t1 - t0) * 1e6 / (double)ops, t1 - t0, c1 - c0);
	return 0;
}
