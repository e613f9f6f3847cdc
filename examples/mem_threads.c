/*
 * mem_threads — blocks allocated in one thread and freed by another:
 * NPROD producer threads allocate COUNT blocks of 4 KiB each (the line
 * marked PRODUCE-SITE) and hand them through a lock-protected queue to one
 * consumer thread that frees them.  Usage: mem_threads [COUNT] (default
 * 20000 per producer, 2 producers).  Prints "freed N blocks", exits 0.
 * Expected under --memory: every sampled block's MEM_FREE comes from the
 * consumer's thread, none leak.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPROD 2
#define QCAP 256

static void *queue[QCAP];
static int qhead, qtail, qlen, done_producers;
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcond = PTHREAD_COND_INITIALIZER;
static long per_producer = 20000;

static void put(void *p)
{
	pthread_mutex_lock(&qlock);
	while (qlen == QCAP)
		pthread_cond_wait(&qcond, &qlock);
	queue[qtail] = p;
	qtail = (qtail + 1) % QCAP;
	qlen++;
	pthread_cond_broadcast(&qcond);
	pthread_mutex_unlock(&qlock);
}

__attribute__((noinline)) static void *producer(void *arg)
{
	(void)arg;
	for (long i = 0; i < per_producer; i++) {
		char *p = malloc(4096); /* PRODUCE-SITE */
		if (!p)
			exit(1);
		memset(p, (int)i, 64);
		put(p);
	}
	pthread_mutex_lock(&qlock);
	done_producers++;
	pthread_cond_broadcast(&qcond);
	pthread_mutex_unlock(&qlock);
	return NULL;
}

__attribute__((noinline)) static void *consumer(void *arg)
{
	long freed = 0;

	for (;;) {
		void *p;

		pthread_mutex_lock(&qlock);
		while (qlen == 0 && done_producers < NPROD)
			pthread_cond_wait(&qcond, &qlock);
		if (qlen == 0) {
			pthread_mutex_unlock(&qlock);
			break;
		}
		p = queue[qhead];
		qhead = (qhead + 1) % QCAP;
		qlen--;
		pthread_cond_broadcast(&qcond);
		pthread_mutex_unlock(&qlock);
		free(p); /* FREE-SITE: another thread's block */
		freed++;
	}
	*(long *)arg = freed;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t prod[NPROD], cons;
	long freed = 0;

	if (argc > 1)
		per_producer = atol(argv[1]);
	if (per_producer < 1 || per_producer > 10000000) {
		fprintf(stderr, "usage: mem_threads [COUNT]\n");
		return 2;
	}
	pthread_create(&cons, NULL, consumer, &freed);
	for (int i = 0; i < NPROD; i++)
		pthread_create(&prod[i], NULL, producer, NULL);
	for (int i = 0; i < NPROD; i++)
		pthread_join(prod[i], NULL);
	pthread_join(cons, NULL);
	printf("freed %ld blocks\n", freed);
	return freed == NPROD * per_producer ? 0 : 1;
}
