/*
 * own_malloc_count.c — a program with its own allocator (issue 31), which
 * counts every call from its first instruction: the calls made before main
 * (the loader's, a preloaded library's constructor's), those of known work
 * (100 mallocs and frees, stdio's buffer, a thread), each printed.  Must
 * hold: the same counts as plainly, in every mode: nothing of the profiler's
 * reaches a program's malloc.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include "hostile.h"

static _Atomic size_t used;
static char *arena;
static _Atomic int calls;

static void *bump(size_t n, size_t align)
{
	size_t off, need;

	if (!arena) {
		void *a = mmap(NULL, 1u << 28, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (a == MAP_FAILED)
			abort();
		arena = a;
	}
	if (align < 16)
		align = 16;
	need = n + align + 16;
	off = atomic_fetch_add(&used, need);
	off = (off + 16 + align - 1) & ~(align - 1);
	((size_t *)(arena + off))[-1] = n;
	return arena + off;
}

void *malloc(size_t n)
{
	calls++;
	return bump(n, 16);
}

void free(void *p)
{
	if (p)
		calls++;
}

void *calloc(size_t a, size_t b)
{
	calls++;
	return bump(a * b, 16); /* fresh mmap pages: already zero */
}

void *realloc(void *p, size_t n)
{
	void *q;

	calls++;
	q = bump(n, 16);
	if (p) {
		size_t o = ((size_t *)p)[-1];

		memcpy(q, p, o < n ? o : n);
	}
	return q;
}

void *memalign(size_t a, size_t n)
{
	calls++;
	return bump(n, a);
}

int posix_memalign(void **r, size_t a, size_t n)
{
	calls++;
	*r = bump(n, a);
	return 0;
}

void *aligned_alloc(size_t a, size_t n)
{
	calls++;
	return bump(n, a);
}

size_t malloc_usable_size(void *p)
{
	return p ? ((size_t *)p)[-1] : 0;
}

static void *worker(void *arg)
{
	(void)arg;
	burn_cpu(0.1);
	return NULL;
}

int main(void)
{
	int before = calls, c, n100;
	void *p[100];
	pthread_t t;

	c = calls;
	for (int i = 0; i < 100; i++)
		p[i] = malloc(64 + (size_t)i);
	for (int i = 0; i < 100; i++)
		free(p[i]);
	n100 = calls - c;
	say("calls before main: %d\n", before);
	say("calls for 100 mallocs and frees: %d\n", n100);
	c = calls;
	if (pthread_create(&t, NULL, worker, NULL) || pthread_join(t, NULL))
		die("thread");
	say("calls for a thread: %d\n", calls - c);
	c = calls;
	burn_cpu(0.4);
	say("calls while burning: %d\n", calls - c);
	return 0;
}
