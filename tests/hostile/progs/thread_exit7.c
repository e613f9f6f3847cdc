/*
 * thread_exit7.c — three threads burn CPU forever while a fourth burns a
 * while, prints, and calls _exit(7); main is blocked in pthread_join.  Must
 * hold: exit status 7 and the same output, as without the profiler.
 */
#include <pthread.h>

#include "hostile.h"

static void *spin(void *arg)
{
	(void)arg;
	for (;;)
		burn_cpu(1.0);
	return NULL;
}

static void *leaver(void *arg)
{
	(void)arg;
	burn_cpu_deep(0.15, 8);
	say("leaving with _exit(7) from a secondary thread\n");
	_exit(7);
}

int main(void)
{
	pthread_t t[4];

	print_views("start");
	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, spin, NULL))
			die("pthread_create");
	if (pthread_create(&t[3], NULL, leaver, NULL))
		die("pthread_create");
	pthread_join(t[3], NULL);
	say("not reached\n");
	return 0;
}
