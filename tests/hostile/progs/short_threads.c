/*
 * short_threads.c — 1000 threads of 0.5 ms of CPU each, eight at a time:
 * each is shorter than a sampling period at 999 Hz.  Must hold: the same
 * output; the CPU accounting is checked by agent.short_threads (at least
 * 90 % of their CPU in the samples).
 */
#include <pthread.h>

#include "hostile.h"

static void *short_work(void *arg)
{
	burn_cpu(0.0005);
	return arg;
}

int main(void)
{
	pthread_t t[8];

	for (int r = 0; r < 125; r++) {
		for (int i = 0; i < 8; i++)
			if (pthread_create(&t[i], NULL, short_work, NULL))
				die("pthread_create");
		for (int i = 0; i < 8; i++)
			pthread_join(t[i], NULL);
	}
	say("1000 threads ran\n");
	return 0;
}
