/*
 * many_threads.c — creates and joins 1000 short threads (each does a little
 * arithmetic and returns it) in batches of 8, while 4 other threads burn
 * 0.1 s of CPU each.  Must hold: every thread runs and returns its value, as
 * without the profiler.
 */
#include <pthread.h>

#include "hostile.h"

#define SHORT 1000

static void *short_one(void *arg)
{
	uintptr_t i = (uintptr_t)arg, v = 0;

	for (uintptr_t k = 0; k <= i % 100; k++)
		v += k * k;
	return (void *)v;
}

static void *burner(void *arg)
{
	(void)arg;
	burn_cpu(0.1);
	return (void *)1;
}

int main(void)
{
	pthread_t b[4], t[8];
	uintptr_t sum = 0, want = 0, burned = 0;
	int created = 0;

	print_views("start");
	for (int i = 0; i < 4; i++)
		if (pthread_create(&b[i], NULL, burner, NULL))
			die("pthread_create");
	for (int i = 0; i < SHORT; i += 8) {
		for (int j = 0; j < 8 && i + j < SHORT; j++) {
			if (pthread_create(&t[j], NULL, short_one, (void *)(uintptr_t)(i + j)))
				die("pthread_create");
			created++;
		}
		for (int j = 0; j < 8 && i + j < SHORT; j++) {
			void *r;

			pthread_join(t[j], &r);
			sum += (uintptr_t)r;
		}
	}
	for (int i = 0; i < SHORT; i++) {
		uintptr_t v = 0;

		for (uintptr_t k = 0; k <= (uintptr_t)i % 100; k++)
			v += k * k;
		want += v;
	}
	for (int i = 0; i < 4; i++) {
		void *r;

		pthread_join(b[i], &r);
		burned += (uintptr_t)r;
	}
	say("short threads: created=%d sum_ok=%s\n", created, sum == want ? "yes" : "no");
	say("burners: %lu\n", (unsigned long)burned);
	print_views("end");
	return 0;
}
