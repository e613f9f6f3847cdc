/*
 * wait_prodcons — a producer and a consumer over a pthread condition
 * variable with a known blocking time: the producer sleeps 17 ms before each
 * of ITEMS items (produce_item, in nanosleep), the consumer waits for each one
 * in take_item (pthread_cond_wait, the line marked WAIT-SITE), so the
 * consumer is blocked in a futex about ITEMS x 17 ms (306 ms by default) and
 * the producer sleeps as long (17 ms, not a multiple of the off-CPU
 * sampler's period, so the waits do not keep one phase against its looks).
 * Threads are named "producer" and "consumer".  Usage: wait_prodcons [ITEMS]
 * (default 18).  Prints a checksum of the items, exits 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static pthread_cond_t taken = PTHREAD_COND_INITIALIZER; /* the slot is free again */
static long slot, have, items = 18;
static unsigned long sum;

__attribute__((noinline)) static void produce_item(long i)
{
	struct timespec ms17 = {0, 17 * 1000000L};

	while (nanosleep(&ms17, &ms17) != 0)
		; /* EINTR: sleep the rest (never expected) */
	pthread_mutex_lock(&lock);
	while (have) /* one slot: never overwrite an item not taken yet */
		pthread_cond_wait(&taken, &lock);
	slot = i * 2654435761L;
	have = 1;
	pthread_cond_signal(&ready);
	pthread_mutex_unlock(&lock);
}

__attribute__((noinline)) static long take_item(void)
{
	long v;

	pthread_mutex_lock(&lock);
	while (!have)
		pthread_cond_wait(&ready, &lock); /* WAIT-SITE */
	v = slot;
	have = 0;
	pthread_cond_signal(&taken);
	pthread_mutex_unlock(&lock);
	return v;
}

static void *producer(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "producer");
	for (long i = 1; i <= items; i++)
		produce_item(i);
	return NULL;
}

static void *consumer(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "consumer");
	for (long i = 1; i <= items; i++)
		sum = sum * 31 + (unsigned long)take_item();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t p, c;

	if (argc > 1 && atol(argv[1]) > 0)
		items = atol(argv[1]);
	if (pthread_create(&c, NULL, consumer, NULL) || pthread_create(&p, NULL, producer, NULL)) {
		fprintf(stderr, "wait_prodcons: pthread_create failed\n");
		return 1;
	}
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	printf("wait_prodcons: %ld items, checksum %lu\n", items, sum);
	return 0;
}
