/*
 * malloc_stress.c — four threads allocate blocks of many sizes, fill them, and
 * hand them through a queue to the next thread, which checks and frees them
 * (memory freed by another thread than the one that allocated it).  Must
 * hold: every block arrives intact and is freed, as without the profiler.
 */
#include <pthread.h>
#include <sched.h>

#include "hostile.h"

#define THREADS 4
#define PER_THREAD 60000
#define QCAP 256

struct queue {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	void *item[QCAP];
	size_t size[QCAP];
	int head, n, closed;
};

static struct queue q[THREADS];

/* 0 when the queue is full. */
static int try_put(struct queue *qu, void *p, size_t sz)
{
	int r = 0;

	pthread_mutex_lock(&qu->lock);
	if (qu->n < QCAP) {
		qu->item[(qu->head + qu->n) % QCAP] = p;
		qu->size[(qu->head + qu->n) % QCAP] = sz;
		qu->n++;
		pthread_cond_broadcast(&qu->cond);
		r = 1;
	}
	pthread_mutex_unlock(&qu->lock);
	return r;
}

/* 1: got one; 0: nothing now; -1: closed and empty. */
static int take(struct queue *qu, void **p, size_t *sz, int wait)
{
	int r = 0;

	pthread_mutex_lock(&qu->lock);
	while (wait && qu->n == 0 && !qu->closed)
		pthread_cond_wait(&qu->cond, &qu->lock);
	if (qu->n) {
		*p = qu->item[qu->head];
		*sz = qu->size[qu->head];
		qu->head = (qu->head + 1) % QCAP;
		qu->n--;
		pthread_cond_broadcast(&qu->cond);
		r = 1;
	} else if (qu->closed) {
		r = -1;
	}
	pthread_mutex_unlock(&qu->lock);
	return r;
}

struct stats {
	int idx;
	long freed, corrupt;
};

static int check_and_free(void *p, size_t sz)
{
	unsigned char *c = p, want = (unsigned char)sz;
	int bad = 0;

	for (size_t i = 0; i < sz; i += 61)
		bad |= c[i] != want;
	bad |= c[sz - 1] != want;
	free(p);
	return bad;
}

static void *worker(void *arg)
{
	struct stats *st = arg;
	struct queue *out = &q[(st->idx + 1) % THREADS], *in = &q[st->idx];
	uint64_t x = (uint64_t)st->idx * 7919 + 1;
	void *p;
	size_t sz;

	for (int i = 0; i < PER_THREAD; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		sz = 1 + (size_t)((x >> 33) % ((x >> 60) == 15 ? 65536 : 2000));
		p = malloc(sz);
		if (!p)
			die("malloc");
		memset(p, (unsigned char)sz, sz);
		/* Drain our own queue while the next one is full: no cycle of
		 * threads all waiting for room. */
		for (;;) {
			int full = !try_put(out, p, sz);
			void *g;
			size_t gsz;

			while (take(in, &g, &gsz, 0) == 1) {
				st->corrupt += check_and_free(g, gsz);
				st->freed++;
			}
			if (!full)
				break;
			sched_yield();
		}
	}
	pthread_mutex_lock(&out->lock);
	out->closed = 1;
	pthread_cond_broadcast(&out->cond);
	pthread_mutex_unlock(&out->lock);
	while (take(in, &p, &sz, 1) == 1) {
		st->corrupt += check_and_free(p, sz);
		st->freed++;
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	struct stats st[THREADS];

	print_views("start");
	for (int i = 0; i < THREADS; i++) {
		pthread_mutex_init(&q[i].lock, NULL);
		pthread_cond_init(&q[i].cond, NULL);
	}
	for (int i = 0; i < THREADS; i++) {
		st[i] = (struct stats){i, 0, 0};
		if (pthread_create(&t[i], NULL, worker, &st[i]))
			die("pthread_create");
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < THREADS; i++)
		say("thread %d: allocated=%d freed_from_neighbour=%ld corrupt=%ld\n", i, PER_THREAD,
		    st[i].freed, st[i].corrupt);
	print_views("end");
	return 0;
}
