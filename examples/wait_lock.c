/*
 * wait_lock — one lock held by one thread for a known share of the run: the
 * thread named "holder" takes the mutex, computes for 6 ms of wall time while
 * holding it (hold_and_compute), releases it and sleeps 4 ms, PERIODS times
 * (40 by default: about 400 ms, the lock held about 60 % of it).  Two threads
 * named "waiter-1" and "waiter-2" take the same mutex in contend() (the line
 * marked LOCK-SITE) every half millisecond and hold it only for an increment,
 * so each waits for the holder about 60 % of the run and almost never for
 * each other.  The holder computes by wall clock, not CPU time, so the share
 * stays the same on a loaded machine.  Usage: wait_lock [PERIODS].  Prints a
 * checksum, exits 0.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int done;
static uint64_t counter;         /* under lock */
static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(long ns)
{
	struct timespec ts = {0, ns};

	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Compute for ns of wall time with the lock held. */
__attribute__((noinline)) static void hold_and_compute(uint64_t ns)
{
	uint64_t end, x = sink;

	pthread_mutex_lock(&lock);
	end = now_ns() + ns;
	while (now_ns() < end) {
		for (int i = 0; i < 2000; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			__asm__ volatile("" : "+r"(x));
		}
	}
	counter += x & 0xff;
	pthread_mutex_unlock(&lock);
	sink = x;
}

__attribute__((noinline)) static void contend(void)
{
	pthread_mutex_lock(&lock); /* LOCK-SITE */
	counter++;
	pthread_mutex_unlock(&lock);
}

static void *holder(void *arg)
{
	long periods = (long)arg;

	pthread_setname_np(pthread_self(), "holder");
	for (long i = 0; i < periods; i++) {
		hold_and_compute(6000000);
		sleep_ns(4000000);
	}
	atomic_store(&done, 1);
	return NULL;
}

static void *waiter(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "waiter-%ld", (long)arg);
	pthread_setname_np(pthread_self(), name);
	while (!atomic_load(&done)) {
		contend();
		sleep_ns(500000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long periods = argc > 1 && atol(argv[1]) > 0 ? atol(argv[1]) : 40;
	pthread_t h, w[2];

	if (pthread_create(&h, NULL, holder, (void *)periods) ||
	    pthread_create(&w[0], NULL, waiter, (void *)1L) ||
	    pthread_create(&w[1], NULL, waiter, (void *)2L)) {
		fprintf(stderr, "wait_lock: pthread_create failed\n");
		return 1;
	}
	pthread_join(h, NULL);
	pthread_join(w[0], NULL);
	pthread_join(w[1], NULL);
	/* the count of waiters' turns varies: print only that the run ended */
	printf("wait_lock: %ld periods, done\n", periods);
	return (int)(counter == 0);
}
