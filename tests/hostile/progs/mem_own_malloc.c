/*
 * mem_own_malloc.c — a program that defines its own allocator in the
 * executable (malloc, free, calloc, realloc and the aligned ones: a bump
 * allocator over one big mapping, as an embedded or game engine might link
 * statically).  Every malloc call in the process, libc's own included, lands
 * here; the allocation hooks must see that they are bypassed and stay out of
 * the way.  Must hold: the program's counts and output are those of a plain
 * run.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "hostile.h"

#define ARENA (512ul << 20)

static char *arena;
static _Atomic size_t used;
static _Atomic long own_calls;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void arena_init(void)
{
	arena = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		     -1, 0);
}

/* Blocks carry their size in the 16 bytes before them. */
static void *own_alloc(size_t size, size_t align)
{
	size_t need, off, start;

	if (!arena) {
		/* pthread_once may itself allocate in some libcs: a plain CAS. */
		static _Atomic int busy;
		int z = 0;
		if (atomic_compare_exchange_strong(&busy, &z, 1))
			arena_init();
		while (!arena)
			;
	}
	if (arena == MAP_FAILED)
		return NULL;
	if (align < 16)
		align = 16;
	need = size + 16 + align;
	off = atomic_fetch_add(&used, need);
	if (off + need > ARENA) {
		errno = ENOMEM;
		return NULL;
	}
	start = ((uintptr_t)arena + off + 16 + align - 1) & ~(uintptr_t)(align - 1);
	((size_t *)start)[-1] = size;
	atomic_fetch_add(&own_calls, 1);
	return (void *)start;
}

void *malloc(size_t size) { return own_alloc(size, 16); }
void free(void *p) { (void)p; }
void *calloc(size_t n, size_t s)
{
	if (s && n > SIZE_MAX / s)
		return NULL;
	return own_alloc(n * s, 16); /* fresh mapping: zero */
}
void *realloc(void *p, size_t s)
{
	void *q = own_alloc(s, 16);
	if (q && p)
		memcpy(q, p, ((size_t *)p)[-1] < s ? ((size_t *)p)[-1] : s);
	return q;
}
void *memalign(size_t a, size_t s) { return own_alloc(s, a); }
void *aligned_alloc(size_t a, size_t s) { return own_alloc(s, a); }
int posix_memalign(void **out, size_t a, size_t s)
{
	void *p = own_alloc(s, a);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}
void *valloc(size_t s) { return own_alloc(s, 4096); }
void *pvalloc(size_t s) { return own_alloc((s + 4095) & ~(size_t)4095, 4096); }
size_t malloc_usable_size(void *p) { return p ? ((size_t *)p)[-1] : 0; }

static void *worker(void *arg)
{
	long n = 0;
	(void)arg;
	for (int i = 0; i < 20000; i++) {
		char *p = malloc((size_t)(16 + i % 300));
		if (!p)
			die("malloc");
		memset(p, 1, 16);
		n += p[0];
		free(p);
	}
	return (void *)n;
}

int main(void)
{
	pthread_t t[4];
	long total = 0;
	char *s;

	(void)once;
	print_views("start");
	s = strdup("libc's strdup allocates with the program's malloc");
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			die("pthread_create");
	for (int i = 0; i < 4; i++) {
		void *r;
		pthread_join(t[i], &r);
		total += (long)r;
	}
	say("own allocator: strdup_ok=%d worker_sum=%ld calls_seen=%d\n",
	    s && malloc_usable_size(s) == strlen(s) + 1, total, atomic_load(&own_calls) >= 80000);
	print_views("end");
	return 0;
}
