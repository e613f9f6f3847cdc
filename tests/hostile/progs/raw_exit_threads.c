/*
 * raw_exit_threads.c — 40 threads burn a little and leave with the raw exit
 * system call (syscall(SYS_exit, 0): no glibc thread exit, no cleanup)
 * while main burns; main then joins them (the kernel clears their tids) and
 * exits normally.  Must hold: the same output and status.
 */
#include <pthread.h>
#include <sys/syscall.h>

#include "hostile.h"

static void *leaver(void *arg)
{
	burn_cpu((double)(uintptr_t)arg / 1000.0);
	syscall(SYS_exit, 0);
	return NULL;
}

int main(void)
{
	pthread_t t[40];

	print_views("start");
	for (int i = 0; i < 40; i++)
		if (pthread_create(&t[i], NULL, leaver, (void *)(uintptr_t)(1 + i % 8)))
			die("pthread_create");
	burn_cpu_deep(0.3, 8);
	for (int i = 0; i < 40; i++)
		pthread_join(t[i], NULL);
	say("40 threads left with the raw exit call\n");
	print_views("end");
	return 0;
}
