/*
 * alloc.c — the agent's own heap: glibc's malloc reached by its internal
 * names (__libc_malloc & co.), so that the agent's allocations never go
 * through a malloc the program defines itself (which would count them in
 * its own leak check) nor through the allocation hooks of --memory (which
 * would count them as the program's).  Another libc: plain malloc.  Normal
 * context only, never the signal handler.
 */
#include <dlfcn.h>
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
