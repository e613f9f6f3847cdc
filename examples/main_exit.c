/*
 * main_exit — main ends with pthread_exit while a worker still runs; the
 * process exits when the worker returns (pthread_exit(3)).  The agent's own
 * threads (background, off-CPU sampler) must not keep it alive.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void *worker(void *arg)
{
	usleep(200000);
	puts("main_exit: worker done");
	fflush(stdout);
	return arg;
}

int main(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	pthread_exit(NULL);
}
