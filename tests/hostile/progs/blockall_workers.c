/*
 * blockall_workers.c — worker threads block every signal with
 * pthread_sigmask(SIG_BLOCK, full set) and burn CPU; the last one to finish
 * sends SIGUSR1 to the process, which main takes with sigwait.  Must hold:
 * main gets SIGUSR1, and each worker reads back a fully blocked mask, as
 * without the profiler.
 */
#include <pthread.h>

#include "hostile.h"

#define WORKERS 3

static int finished;

static void *worker(void *arg)
{
	int *blocked = arg;
	sigset_t all, now;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	burn_cpu_deep(0.2, 8);
	pthread_sigmask(SIG_BLOCK, NULL, &now);
	*blocked = 0;
	for (int s = 1; s <= SIGRTMAX; s++)
		*blocked += sigismember(&now, s) == 1;
	if (__atomic_add_fetch(&finished, 1, __ATOMIC_SEQ_CST) == WORKERS)
		kill(getpid(), SIGUSR1);
	return NULL;
}

int main(void)
{
	pthread_t t[WORKERS];
	int blocked[WORKERS], sig = 0;
	sigset_t usr1;

	print_views("start");
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	for (int i = 0; i < WORKERS; i++)
		if (pthread_create(&t[i], NULL, worker, &blocked[i]))
			die("pthread_create");
	burn_cpu(0.1);
	if (sigwait(&usr1, &sig))
		die("sigwait");
	say("sigwait: %s\n", sig_name(sig));
	for (int i = 0; i < WORKERS; i++) {
		pthread_join(t[i], NULL);
		say("worker %d: signals blocked=%d\n", i, blocked[i]);
	}
	print_views("end");
	return 0;
}
