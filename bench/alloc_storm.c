/*
 * alloc_storm.c — a synthetic allocation storm for bench/memory.sh: T threads
 * each run N rounds of a mixed pattern (short-lived small blocks, a sliding
 * window of medium blocks freed out of order, an occasional large block), so
 * the heap's live size rises to a known plateau while millions of calls go
 * through malloc/free.  Prints the exact peak of the bytes it holds itself
 * (requested sizes, summed over threads as each reached its own maximum).
 * Usage: alloc_storm [THREADS] [ROUNDS]   (default 2 threads, 2000000 rounds)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 4096

struct arg {
	long rounds;
	unsigned seed;
	size_t held, peak;
};

static void *storm(void *p)
{
	struct arg *a = p;
	void *win[WINDOW] = {0};
	size_t winsz[WINDOW] = {0};
	unsigned x = a->seed;
	long i;

	for (i = 0; i < a->rounds; i++) {
		size_t sz;
		unsigned slot;
		char *tmp;

		x = x * 1103515245u + 12345u;
		/* short-lived: allocated, touched, freed at once */
		sz = 16 + (x >> 8) % 240;
		tmp = malloc(sz);
		if (!tmp)
			return NULL;
		tmp[0] = (char)i;
		free(tmp);
		/* a window of longer-lived medium blocks, replaced at random */
		slot = (x >> 4) % WINDOW;
		sz = (i % 1024 == 0) ? 256 * 1024 : 64 + (x >> 12) % 4000;
		if (win[slot]) {
			a->held -= winsz[slot];
			free(win[slot]);
		}
		win[slot] = malloc(sz);
		if (!win[slot])
			return NULL;
		memset(win[slot], 1, sz < 64 ? sz : 64);
		winsz[slot] = sz;
		a->held += sz;
		if (a->held > a->peak)
			a->peak = a->held;
	}
	for (i = 0; i < WINDOW; i++)
		free(win[i]);
	return NULL;
}

int main(int argc, char **argv)
{
	int t = argc > 1 ? atoi(argv[1]) : 2, i;
	long rounds = argc > 2 ? atol(argv[2]) : 2000000;
	pthread_t th[64];
	struct arg a[64];
	size_t peak = 0;

	if (t < 1 || t > 64 || rounds < 1) {
		fprintf(stderr, "usage: alloc_storm [THREADS 1-64] [ROUNDS]\n");
		return 2;
	}
	for (i = 0; i < t; i++) {
		memset(&a[i], 0, sizeof(a[i]));
		a[i].rounds = rounds;
		a[i].seed = 12345u + (unsigned)i * 7919u;
		if (pthread_create(&th[i], NULL, storm, &a[i]) != 0)
			return 1;
	}
	for (i = 0; i < t; i++) {
		pthread_join(th[i], NULL);
		peak += a[i].peak;
	}
	printf("held peak %zu bytes (sum of per-thread peaks)\n", peak);
	return 0;
}
