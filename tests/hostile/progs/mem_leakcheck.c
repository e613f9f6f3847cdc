/*
 * mem_leakcheck.c — the program defines malloc, calloc, realloc and free
 * itself (a bump allocator that counts the blocks live) and checks for leaks
 * at exit: the number of blocks allocated and not freed since main started,
 * by its own malloc (every caller in the process reaches it).  Must hold:
 * the same counts (the profiler's own allocations go to glibc's malloc, by
 * its internal names).  Before: 66 blocks of the agent's and the loader's.
 */
#include <pthread.h>
#include <stdint.h>

#include "hostile.h"

static char heap[64 << 20] __attribute__((aligned(4096)));
static size_t used;
static long live, counting;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Blocks carry their size in the 16 bytes before them. */
static void *own_alloc(size_t n, size_t align)
{
	size_t start;
	char *p = NULL;

	if (align < 16)
		align = 16;
	pthread_mutex_lock(&lock);
	start = ((uintptr_t)heap + used + 16 + align - 1) & ~(uintptr_t)(align - 1);
	if (start + n <= (uintptr_t)heap + sizeof(heap)) {
		p = (char *)start;
		((size_t *)p)[-1] = n;
		used = start + n - (uintptr_t)heap;
		if (counting)
			live++;
	}
	pthread_mutex_unlock(&lock);
	if (!p)
		errno = ENOMEM;
	return p;
}

void *malloc(size_t n) { return own_alloc(n, 16); }

void free(void *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&lock);
	if (counting)
		live--;
	pthread_mutex_unlock(&lock);
}

void *calloc(size_t a, size_t b)
{
	return a && b > (size_t)-1 / a ? NULL : own_alloc(a * b, 16); /* never reused: zero */
}

void *realloc(void *p, size_t n)
{
	void *q = own_alloc(n, 16);

	if (q && p) {
		memcpy(q, p, ((size_t *)p)[-1] < n ? ((size_t *)p)[-1] : n);
		free(p);
	}
	return q;
}

void *memalign(size_t a, size_t n) { return own_alloc(n, a); }
void *aligned_alloc(size_t a, size_t n) { return own_alloc(n, a); }
void *valloc(size_t n) { return own_alloc(n, 4096); }
void *pvalloc(size_t n) { return own_alloc((n + 4095) & ~(size_t)4095, 4096); }
size_t malloc_usable_size(void *p) { return p ? ((size_t *)p)[-1] : 0; }

int posix_memalign(void **out, size_t a, size_t n)
{
	void *p = own_alloc(n, a);

	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

static void *worker(void *arg)
{
	char *keep = malloc(100); /* a leak of its own: one block */

	burn_cpu_deep(0.2, 8);
	return keep ? arg : NULL;
}

static void leakcheck(void)
{
	say("live blocks at exit: %ld\n", live);
}

int main(void)
{
	pthread_t t[3];

	counting = 1;
	atexit(leakcheck);
	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			die("pthread_create");
	burn_cpu_deep(0.2, 8);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	free(malloc(10));
	say("threads done\n");
	return 0;
}
