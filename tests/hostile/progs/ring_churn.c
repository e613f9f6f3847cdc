/*
 * ring_churn.c — 3000 threads in batches of 16, each allocating, freeing
 * and burning 0.3 ms: for --ring with --memory, where every thread takes a
 * chunk of samples and one of allocations in a bounded file.  Must hold:
 * the same output; agent.ring_threads checks what the ring kept.
 */
#include <pthread.h>

#include "hostile.h"

static void *churn(void *arg)
{
	double end = thread_cpu() + 0.0003;
	uint64_t s = 0;

	(void)arg;
	/* At least once: a thread whose 0.3 ms had passed before its first
	 * look (preempted on a loaded machine) still allocates, so the count
	 * printed does not depend on the machine's load. */
	do {
		char *p = malloc(1000);

		if (!p)
			die("malloc");
		p[0] = 1;
		s += (unsigned char)p[0];
		free(p);
		s += burn_chunk(s) & 1;
	} while (thread_cpu() < end);
	return (void *)(uintptr_t)(s > 0);
}

int main(void)
{
	pthread_t t[16];
	long ok = 0;
	void *r;

	for (int b = 0; b < 3000 / 16; b++) {
		for (int i = 0; i < 16; i++)
			if (pthread_create(&t[i], NULL, churn, NULL))
				die("pthread_create");
		for (int i = 0; i < 16; i++) {
			pthread_join(t[i], &r);
			ok += (long)(uintptr_t)r;
		}
	}
	say("threads that allocated: %ld\n", ok);
	return 0;
}
