/*
 * forkstress.c — forks 60 times from a parent whose three threads keep calling
 * dlopen/dlclose, sigaction, pthread_setname_np and annotation ranges: the
 * children inherit whatever locks those threads held (the loader's included)
 * and must still run, create a thread and exit 3.  Prints "forkstress: ok".
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbottleneck.h"

static volatile int stop;

static void *busy(void *arg)
{
	struct sigaction sa;
	char name[16];
	int i = 0;

	while (!stop) {
		volatile unsigned long x = 1;

		CBN_RANGE_PUSH("busy");
		snprintf(name, sizeof(name), "busy-%d", i++ % 10);
		pthread_setname_np(pthread_self(), name);
		sigaction(SIGPROF, NULL, &sa);
		CBN_RANGE_POP();
		if (arg) {
			void *h = dlopen("libm.so.6", RTLD_NOW);

			if (h)
				dlclose(h);
		}
		for (int k = 0; k < 20000; k++)
			x = x * 6364136223846793005ul + 1;
	}
	return NULL;
}

int main(void)
{
	pthread_t th[3], t;
	int i, bad = 0, st;

	for (i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, busy, (void *)1);
	for (i = 0; i < 60; i++) {
		pid_t p = fork();

		if (p == 0) {
			/* The child runs one loop of busy() on a new thread. */
			stop = 1;
			CBN_RANGE_PUSH("child");
			CBN_RANGE_POP();
			pthread_create(&t, NULL, busy, NULL);
			pthread_join(t, NULL);
			_exit(3);
		}
		if (p < 0 || waitpid(p, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 3)
			bad++;
	}
	stop = 1;
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	printf("forkstress: %s\n", bad ? "children failed" : "ok");
	return bad != 0;
}
