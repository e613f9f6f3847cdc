/*
 * ctl_loop — a step loop to control from outside (`cbottleneck ctl`): prints
 * "ctl_loop: pid N" first, then runs steps of STEP_MS of CPU each, marked by
 * CBN_STEP(), until SECONDS have passed or the file STOPFILE exists.
 * Usage: ctl_loop [SECONDS [STOPFILE [STEP_MS [thread]]]] (default 3 s, none,
 * 10 ms); "thread": the loop runs in a second thread and main calls
 * pthread_exit (the process ends with that thread); "fork": a forked child
 * runs the loop too, after printing "ctl_loop: child pid N", and the parent
 * waits for it.  Runs the same without cbottleneck.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "burn.h"
#include "cbottleneck.h"

__attribute__((noinline)) static void ctl_step(uint64_t ns)
{
	BURN_CPU(ns);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double secs = 3.0;
static const char *stop;
static uint64_t step;

static void *loop(void *arg)
{
	uint64_t end = mono_ns() + (uint64_t)(secs * 1e9);
	long steps = 0;

	(void)arg;
	while (mono_ns() < end && !(stop && access(stop, F_OK) == 0)) {
		ctl_step(step);
		CBN_STEP();
		steps++;
	}
	printf("ctl_loop: done (%s)\n", steps > 0 ? "stepped" : "no step");
	fflush(stdout);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;

	secs = burn_arg(argc, argv, 1, 3.0);
	stop = argc > 2 && argv[2][0] ? argv[2] : NULL;
	step = (uint64_t)(burn_arg(argc, argv, 3, 10.0) * 1e6);
	printf("ctl_loop: pid %d\n", (int)getpid());
	fflush(stdout);
	if (argc > 4 && !strcmp(argv[4], "thread")) {
		if (pthread_create(&th, NULL, loop, NULL) != 0)
			return 1;
		pthread_exit(NULL);
	}
	if (argc > 4 && !strcmp(argv[4], "fork")) {
		pid_t child = fork();

		if (child == 0) {
			printf("ctl_loop: child pid %d\n", (int)getpid());
			fflush(stdout);
			loop(NULL);
			return 0;
		}
		loop(NULL);
		if (child > 0)
			waitpid(child, NULL, 0);
		return 0;
	}
	loop(NULL);
	return 0;
}
