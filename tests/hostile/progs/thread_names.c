/*
 * thread_names.c — names threads every way Linux allows: prctl(PR_SET_NAME) on
 * main and on a worker, pthread_setname_np on itself and from main for
 * another thread, then lists /proc/self/task/<tid>/comm (sorted) while they
 * run and after they are joined.  Must hold: the same names, as without the
 * profiler.
 */
#include <pthread.h>
#include <sys/prctl.h>

#include "hostile.h"

static pthread_barrier_t named, done;

static void *worker(void *arg)
{
	int idx = (int)(intptr_t)arg;
	char name[16];

	if (idx == 0) {
		pthread_setname_np(pthread_self(), "hworker-self");
	} else if (idx == 1) {
		prctl(PR_SET_NAME, "hworker-prctl", 0, 0, 0);
	}
	burn_cpu(0.15);
	pthread_barrier_wait(&named);
	pthread_getname_np(pthread_self(), name, sizeof(name));
	pthread_barrier_wait(&done);
	return NULL;
}

int main(void)
{
	pthread_t t[3];
	char name[16];

	print_views("start");
	prctl(PR_SET_NAME, "hostile-main", 0, 0, 0);
	pthread_barrier_init(&named, NULL, 4);
	pthread_barrier_init(&done, NULL, 4);
	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i))
			die("pthread_create");
	pthread_setname_np(t[2], "hworker-main");
	burn_cpu(0.15);
	pthread_barrier_wait(&named);
	print_comms("running");
	for (int i = 0; i < 3; i++) {
		pthread_getname_np(t[i], name, sizeof(name));
		say("worker %d: %s\n", i, name);
	}
	pthread_barrier_wait(&done);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	print_threads("joined");
	print_comms("joined");
	print_views("end");
	return 0;
}
