/*
 * thread_count.c — counts its own threads (/proc/self/task and the Threads:
 * line of /proc/self/status) at start, with 3 threads of its own running, and
 * after joining them.  Must hold: 1, 4, 1, as without the profiler (a
 * profiler thread is visible to every program that counts its threads).
 */
#include <pthread.h>

#include "hostile.h"

static pthread_barrier_t started, release;

static void *worker(void *arg)
{
	(void)arg;
	burn_cpu(0.1);
	pthread_barrier_wait(&started);
	pthread_barrier_wait(&release);
	burn_cpu(0.03);
	return NULL;
}

int main(void)
{
	pthread_t t[3];

	print_views("start");
	burn_cpu(0.05);
	print_threads("before-create");
	pthread_barrier_init(&started, NULL, 4);
	pthread_barrier_init(&release, NULL, 4);
	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			die("pthread_create");
	burn_cpu(0.1);
	pthread_barrier_wait(&started);
	print_threads("running-3");
	pthread_barrier_wait(&release);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	print_threads("joined");
	burn_cpu(0.05);
	print_views("end");
	return 0;
}
