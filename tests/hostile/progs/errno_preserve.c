/*
 * errno_preserve.c — main and a second thread each set errno, burn CPU with no
 * system call, and check errno is unchanged, 9000 times each.  Must hold: no
 * mismatch, as without the profiler (a signal handler must restore errno).
 */
#include <pthread.h>

#include "hostile.h"

#define ROUNDS 9000

static void *checker(void *arg)
{
	int *bad = arg;
	uint64_t x = 7;

	for (int i = 0; i < ROUNDS; i++) {
		int want = 1 + i % 133;

		errno = want;
		x = burn_chunk(x);
		if (errno != want)
			(*bad)++;
	}
	return NULL;
}

int main(void)
{
	pthread_t t;
	int bad_main = 0, bad_thread = 0;

	print_views("start");
	if (pthread_create(&t, NULL, checker, &bad_thread))
		die("pthread_create");
	checker(&bad_main);
	pthread_join(t, NULL);
	say("rounds=%d mismatches: main=%d thread=%d\n", ROUNDS, bad_main, bad_thread);
	print_views("end");
	return 0;
}
