/*
 * alloc.c — the agent's own heap, apart from the program's: blocks carved
 * from mappings of its own (raw mmap, which the --memory hooks never see),
 * so that nothing of the agent's is ever allocated in or freed to the
 * program's allocator or glibc's arenas (a program's own malloc counts only
 * its own calls; glibc's heap layout and dynamic mmap threshold follow the
 * program's calls alone).  Power-of-two size classes from 16 bytes to 32 KiB
 * with a free list each, carved from 256 KiB chunks; larger blocks are
 * mappings of their own.  One lock (taken around fork by the agent's fork
 * handlers, innermost).  Normal context only, never the signal handler.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "alloc.h"
#include "floor.h"

#define AL_MIN_SHIFT 4                   /* 16 bytes */
#define AL_CLASSES 12                    /* 16 B .. 32 KiB */
#define AL_CHUNK (256u << 10)            /* carved for the size classes */
#define AL_HDR 16u                       /* before every block: its class, or its length */
#define AL_LARGE 0xffu                   /* the header's class of a mapping of its own */

struct al_free {
	struct al_free *next;
};

static struct {
	pthread_mutex_t lock;
	struct al_free *free[AL_CLASSES];
	char *chunk;                     /* the chunk being carved */
	size_t left;                     /* bytes left in it */
} al = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void *al_map(size_t n)
{
	long r = agent_syscall(SYS_mmap, NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0L);

	return r < 0 && r > -4096 ? NULL : (void *)r;
}

/* The class of a block of n bytes (header included), or -1: a large one. */
static int al_class(size_t n)
{
	int c = 0;

	while (c < AL_CLASSES && ((size_t)1 << (c + AL_MIN_SHIFT)) < n)
		c++;
	return c < AL_CLASSES ? c : -1;
}

void *agent_alloc(size_t n)
{
	size_t want = n + AL_HDR, size;
	int c = al_class(want);
	char *b;

	if (n > SIZE_MAX - AL_HDR - 4096)
		return NULL;
	if (c < 0) {
		size = (want + 4095) & ~(size_t)4095;
		b = al_map(size);
		if (!b)
			return NULL;
		*(size_t *)b = size;
		b[8] = (char)AL_LARGE;
		return b + AL_HDR;
	}
	size = (size_t)1 << (c + AL_MIN_SHIFT);
	pthread_mutex_lock(&al.lock);
	if (al.free[c]) {
		b = (char *)al.free[c];
		al.free[c] = al.free[c]->next;
	} else {
		if (al.left < size) {
			/* the rest of the old chunk is lost: a few KiB at most */
			al.chunk = al_map(AL_CHUNK);
			al.left = al.chunk ? AL_CHUNK : 0;
		}
		b = al.left >= size ? al.chunk : NULL;
		if (b) {
			al.chunk += size;
			al.left -= size;
		}
	}
	pthread_mutex_unlock(&al.lock);
	if (!b)
		return NULL;
	*(size_t *)b = size;
	b[8] = (char)c;
	return b + AL_HDR;
}

void *agent_calloc(size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	p = agent_alloc(n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

void agent_free(void *p)
{
	char *b = (char *)p - AL_HDR;
	int c;

	if (!p)
		return;
	c = (unsigned char)b[8];
	if (c == AL_LARGE) {
		agent_syscall(SYS_munmap, b, *(size_t *)b);
		return;
	}
	pthread_mutex_lock(&al.lock);
	((struct al_free *)b)->next = al.free[c];
	al.free[c] = (struct al_free *)b;
	pthread_mutex_unlock(&al.lock);
}

void *agent_realloc(void *p, size_t n)
{
	size_t have;
	void *q;

	if (!p)
		return agent_alloc(n);
	have = *(size_t *)((char *)p - AL_HDR) - AL_HDR;
	if (n <= have)
		return p;
	q = agent_alloc(n);
	if (!q)
		return NULL;
	memcpy(q, p, have);
	agent_free(p);
	return q;
}

/* Around a fork (agent.c's handlers): the child finds the lock free. */
void agent_alloc_lock(void)
{
	pthread_mutex_lock(&al.lock);
}

void agent_alloc_unlock(void)
{
	pthread_mutex_unlock(&al.lock);
}

int agent_alloc_trylock(void)
{
	return pthread_mutex_trylock(&al.lock) == 0;
}

void agent_alloc_after_fork_child(void)
{
	pthread_mutex_init(&al.lock, NULL);
}

char *agent_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = agent_alloc(n);

	if (d)
		memcpy(d, s, n);
	return d;
}

/*
 * Small blocks handed from one thread to a new one (pthread_create's start
 * arguments): from a static pool, never the heap, because glibc's free() in
 * a thread that has not allocated yet sets up that thread's malloc cache in
 * an arena of its own, which reserves 64 MiB of address space (a program
 * under RLIMIT_AS 512 MiB then failed a malloc of 128 MiB with four threads
 * that never allocate).  The heap serves only when the pool is empty.
 */
#define HANDOFF_SLOTS 256
#define HANDOFF_SIZE 64

static struct {
	_Alignas(16) unsigned char b[HANDOFF_SIZE];
} handoff[HANDOFF_SLOTS];
static _Atomic unsigned char handoff_used[HANDOFF_SLOTS];

void *agent_handoff_alloc(size_t n)
{
	int i;

	if (n <= HANDOFF_SIZE)
		for (i = 0; i < HANDOFF_SLOTS; i++) {
			unsigned char zero = 0;

			if (!atomic_load_explicit(&handoff_used[i], memory_order_relaxed) &&
			    atomic_compare_exchange_strong(&handoff_used[i], &zero, 1))
				return handoff[i].b;
		}
	return agent_alloc(n);
}

void agent_handoff_free(void *p)
{
	uintptr_t a = (uintptr_t)p, lo = (uintptr_t)handoff, hi = lo + sizeof(handoff);

	if (a >= lo && a < hi)
		atomic_store_explicit(&handoff_used[(a - lo) / sizeof(handoff[0])], 0,
				      memory_order_release);
	else
		agent_free(p);
}
