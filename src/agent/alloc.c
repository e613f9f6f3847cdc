/*
 * alloc.c — the agent's own heap: glibc's malloc reached by its internal
 * names (__libc_malloc & co.), so that the agent's allocations never go
 * through a malloc the program defines itself (which would count them in
 * its own leak check) nor through the allocation hooks of --memory (which
 * would count them as the program's).  Another libc: plain malloc.  Normal
 * context only, never the signal handler.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"

static struct {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void (*free)(void *);
	int ready;
} al;

/* Before the first allocation: the constructor (one thread). */
void agent_alloc_init(void)
{
	void *m, *c, *r, *f;

	if (al.ready)
		return;
	m = dlsym(RTLD_DEFAULT, "__libc_malloc");
	c = dlsym(RTLD_DEFAULT, "__libc_calloc");
	r = dlsym(RTLD_DEFAULT, "__libc_realloc");
	f = dlsym(RTLD_DEFAULT, "__libc_free");
	if (m && c && r && f) {
		*(void **)&al.malloc = m;
		*(void **)&al.calloc = c;
		*(void **)&al.realloc = r;
		*(void **)&al.free = f;
	} else {
		al.malloc = malloc;
		al.calloc = calloc;
		al.realloc = realloc;
		al.free = free;
	}
	__atomic_store_n(&al.ready, 1, __ATOMIC_RELEASE);
}

void *agent_alloc(size_t n)
{
	if (!__atomic_load_n(&al.ready, __ATOMIC_ACQUIRE))
		agent_alloc_init();
	return al.malloc(n);
}

void *agent_calloc(size_t n, size_t size)
{
	if (!__atomic_load_n(&al.ready, __ATOMIC_ACQUIRE))
		agent_alloc_init();
	return al.calloc(n, size);
}

void *agent_realloc(void *p, size_t n)
{
	if (!__atomic_load_n(&al.ready, __ATOMIC_ACQUIRE))
		agent_alloc_init();
	return al.realloc(p, n);
}

void agent_free(void *p)
{
	if (p)
		al.free(p);
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
