/*
 * capture_app.c — a CPU-bound program for the capture-control tests
 * (agent_test.sh capture_*, bench/steps.sh): worker threads spin for the
 * whole run while the main thread spins through phases, marking them with
 * include/cbottleneck.h's calls.  Without the agent the calls are no-ops and
 * the output is the same.
 *
 *   capture_app api THREADS MS      MS busy, cbn_start, MS, cbn_stop, MS
 *   capture_app steps THREADS N MS  N steps of MS each, cbn_step() after each
 *   capture_app toggle THREADS MS   MS, raise the toggle signal, MS, raise it
 *                                   again, MS (only with the agent: SIGUSR2
 *                                   would kill the program otherwise)
 *   capture_app idle THREADS MS     MS busy, nothing else
 *   capture_app work THREADS N      N million iterations on each thread, the
 *                                   main one included (fixed work: bench/steps.sh)
 *   capture_app ownsig THREADS MS   installs its own SIGUSR2 handler, raises
 *                                   SIGUSR2, MS busy: the handler must run
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cbottleneck.h"

static _Atomic int running = 1;
static unsigned long fixed_iters;        /* work: per thread, else 0 */
static volatile sig_atomic_t hits;

static void on_usr2(int sig)
{
	(void)sig;
	hits++;
}
static volatile unsigned long sink;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static __attribute__((noinline)) void spin(double ms)
{
	double end = now_ms() + ms;
	unsigned long i, x = sink;

	while (now_ms() < end)
		for (i = 0; i < 2000; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink = x;
}

static __attribute__((noinline)) void work(unsigned long n)
{
	unsigned long i, x = sink;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink = x;
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "cap-worker");
	if (fixed_iters) {
		work(fixed_iters);
		return NULL;
	}
	while (atomic_load(&running))
		spin(1);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	const char *mode = argc > 1 ? argv[1] : "";
	int nth = argc > 2 ? atoi(argv[2]) : 1, i, n;
	double ms;

	if (argc < 4 || nth < 0 || nth > 64) {
		fprintf(stderr, "usage: capture_app api|steps|toggle|idle THREADS [N] MS\n");
		return 2;
	}
	if (!strcmp(mode, "work"))
		fixed_iters = strtoul(argv[3], NULL, 10) * 1000000ul;
	for (i = 0; i < nth; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	if (!strcmp(mode, "work")) {
		work(fixed_iters);
	} else if (!strcmp(mode, "api")) {
		ms = atof(argv[3]);
		spin(ms);
		CBN_START();
		spin(ms);
		CBN_STOP();
		spin(ms);
	} else if (!strcmp(mode, "steps") && argc > 4) {
		n = atoi(argv[3]);
		ms = atof(argv[4]);
		for (i = 0; i < n; i++) {
			spin(ms);
			CBN_STEP();
		}
	} else if (!strcmp(mode, "toggle")) {
		ms = atof(argv[3]);
		spin(ms);
		if (cbn_start)
			kill(getpid(), SIGUSR2);
		spin(ms);
		if (cbn_start)
			kill(getpid(), SIGUSR2);
		spin(ms);
	} else if (!strcmp(mode, "ownsig")) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr2;
		sigaction(SIGUSR2, &sa, NULL);
		kill(getpid(), SIGUSR2);
		spin(atof(argv[3]));
		printf("ownsig: %d hit\n", (int)hits);
	} else if (!strcmp(mode, "idle")) {
		spin(atof(argv[3]));
	} else {
		fprintf(stderr, "capture_app: unknown mode %s\n", mode);
		return 2;
	}
	atomic_store(&running, 0);
	for (i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	printf("capture_app: %s done\n", mode);
	return 0;
}
