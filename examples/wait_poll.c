/*
 * wait_poll — a thread sleeping in poll() for a known time while main
 * computes: the thread named "poller" waits in wait_in_poll() (the line marked
 * POLL-SITE) for a pipe that never becomes readable, with a 300 ms timeout;
 * main computes in main_compute() until the poller is done and 100 ms more
 * (wall clock).  Usage: wait_poll [TIMEOUT_MS] (default 300).  Prints what
 * poll returned, exits 0.
 */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int pfd[2];
static int timeout_ms = 300;
static atomic_int polled;
static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static int wait_in_poll(void)
{
	struct pollfd p = {.fd = pfd[0], .events = POLLIN};

	return poll(&p, 1, timeout_ms); /* POLL-SITE */
}

static void *poller(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "poller");
	atomic_store(&polled, wait_in_poll() == 0 ? 1 : 2);
	return NULL;
}

/* Compute until the poller is done, then 100 ms more. */
__attribute__((noinline)) static void main_compute(void)
{
	uint64_t x = sink, end = 0;

	for (;;) {
		for (int i = 0; i < 20000; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			__asm__ volatile("" : "+r"(x));
		}
		if (!end && atomic_load(&polled))
			end = now_ns() + 100000000u;
		if (end && now_ns() >= end)
			break;
	}
	sink = x;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 1 && atoi(argv[1]) > 0)
		timeout_ms = atoi(argv[1]);
	if (pipe(pfd) < 0 || pthread_create(&t, NULL, poller, NULL)) {
		fprintf(stderr, "wait_poll: pipe or pthread_create failed\n");
		return 1;
	}
	main_compute();
	pthread_join(t, NULL);
	printf("wait_poll: poll returned %s\n", atomic_load(&polled) == 1 ? "0 (timeout)" : "early");
	return atomic_load(&polled) == 1 ? 0 : 1;
}
