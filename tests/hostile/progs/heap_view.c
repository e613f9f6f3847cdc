/*
 * heap_view.c — the heap as the program made it (issue 31).  glibc's arena
 * statistics at the first line of main (before stdio's buffer), and a
 * scratch check 200 times over: after large blocks of varied sizes are
 * written and freed, does a fresh 1 MiB block come back zeroed (fresh pages
 * from mmap) or recycled from the heap?  The answer follows glibc's dynamic
 * mmap threshold, which every allocation and free in the arena moves: one
 * of ours, anywhere in the process, changes the count.  Then the same with
 * a thread's arena.  Must hold: the same numbers as plainly, in every mode.
 */
#include <malloc.h>
#include <pthread.h>

#include "hostile.h"

static unsigned seed = 2024;

static size_t next_size(void)
{
	seed = seed * 1103515245u + 12345u;
	return (size_t)(96u << 10) + (seed >> 8) % (3u << 20);
}

/* How many of rounds scratch blocks came back zeroed. */
static int scratch_rounds(int rounds)
{
	int zeroed = 0;

	for (int r = 0; r < rounds; r++) {
		void *big[3];
		unsigned char *s;
		size_t i;

		for (i = 0; i < 3; i++) {
			size_t n = next_size();

			big[i] = malloc(n);
			if (!big[i])
				die("malloc %zu", n);
			memset(big[i], 0xa5, n);
		}
		free(big[1]);
		free(big[0]);
		free(big[2]);
		s = malloc(1u << 20);
		if (!s)
			die("malloc 1 MiB");
		for (i = 0; i < (1u << 20) && !s[i]; i++)
			;
		zeroed += i == (1u << 20);
		memset(s, 0x5a, 1u << 20);
		free(s);
		if (r % 50 == 0)
			burn_cpu(0.02);
	}
	return zeroed;
}

static void *thread_rounds(void *arg)
{
	*(int *)arg = scratch_rounds(100);
	return NULL;
}

int main(void)
{
	struct mallinfo2 m0 = mallinfo2(), m1;
	pthread_t t;
	int zeroed, tz = -1;

	say("heap[start]: arena=%zu ordblks=%zu hblks=%zu hblkhd=%zu uordblks=%zu\n", m0.arena,
	    m0.ordblks, m0.hblks, m0.hblkhd, m0.uordblks);
	zeroed = scratch_rounds(200);
	m1 = mallinfo2();
	say("heap[main]: scratch zeroed %d of 200; arena=%zu hblks=%zu hblkhd=%zu uordblks=%zu\n",
	    zeroed, m1.arena, m1.hblks, m1.hblkhd, m1.uordblks);
	if (pthread_create(&t, NULL, thread_rounds, &tz) || pthread_join(t, NULL))
		die("thread");
	say("heap[thread]: scratch zeroed %d of 100\n", tz);
	burn_cpu(0.3);
	return 0;
}
