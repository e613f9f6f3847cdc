/*
 * threads — four worker threads named worker-1..worker-4; worker i burns i units
 * of CPU in worker_spin(), main burns 1 unit in main_spin().  Usage:
 * threads [SCALE]; the whole run is ≈ SCALE seconds of CPU (11 units).
 */
#include <pthread.h>
#include <stdio.h>

#include "burn.h"

static uint64_t unit_ns;

__attribute__((noinline)) void worker_spin(uint64_t ns)
{
	BURN_CPU(ns);
}

__attribute__((noinline)) void main_spin(uint64_t ns)
{
	BURN_CPU(ns);
}

static void *worker(void *arg)
{
	long i = (long)arg;
	char name[16];

	snprintf(name, sizeof(name), "worker-%ld", i);
	pthread_setname_np(pthread_self(), name);
	worker_spin(unit_ns * (uint64_t)i);
	return NULL;
}

int main(int argc, char **argv)
{
	double scale = burn_arg(argc, argv, 1, 1.0);
	pthread_t th[4];
	long i;

	unit_ns = (uint64_t)(scale * 1e9 / 11.0);
	for (i = 0; i < 4; i++) {
		if (pthread_create(&th[i], NULL, worker, (void *)(i + 1)) != 0) {
			perror("pthread_create");
			return 1;
		}
	}
	main_spin(unit_ns);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	printf("threads: done\n");
	return 0;
}
