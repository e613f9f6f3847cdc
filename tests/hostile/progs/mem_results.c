/*
 * mem_results.c — the aligned and odd allocation calls give what glibc
 * gives: pvalloc(0), pvalloc(5000), valloc(1), memalign(64, 100),
 * aligned_alloc(4096, 4096), posix_memalign(32, 1) and (3, 8) (EINVAL),
 * realloc(p, 0) (frees, NULL), reallocarray and calloc overflows (ENOMEM),
 * malloc(0): alignment, whether the usable size covers what was asked and
 * is under a page or whole pages (the exact slack of an aligned block
 * depends on the heap's state, which the loader's work for the profiler's
 * libraries changes).  Must hold: the same answers.  Before: pvalloc(0) was
 * a whole page under the hooks (glibc's is 24 bytes).
 */
#include <malloc.h>
#include <stdint.h>

#include "hostile.h"

static void show(const char *what, void *p, size_t align, size_t asked)
{
	size_t u = p ? malloc_usable_size(p) : 0;

	say("%s: %s aligned=%s covers=%s usable=%s\n", what, p ? "ok" : "NULL",
	    p && ((uintptr_t)p % align) == 0 ? "yes" : "no", u >= asked ? "yes" : "no",
	    !p ? "-" : u < 4096 ? "under a page" : u % 4096 == 0 ? "whole pages" : "pages and more");
}

int main(void)
{
	void *p, *q;
	int r;

	burn_cpu_deep(0.3, 8);
	show("pvalloc(0)", p = pvalloc(0), 16, 0);
	free(p);
	show("pvalloc(5000)", p = pvalloc(5000), 4096, 8192);
	free(p);
	show("valloc(1)", p = valloc(1), 4096, 1);
	free(p);
	show("memalign(64, 100)", p = memalign(64, 100), 64, 100);
	free(p);
	show("aligned_alloc(4096, 4096)", p = aligned_alloc(4096, 4096), 4096, 4096);
	free(p);
	r = posix_memalign(&p, 32, 1);
	say("posix_memalign(32, 1): %d\n", r);
	show("  block", r ? NULL : p, 32, 1);
	if (!r)
		free(p);
	r = posix_memalign(&q, 3, 8);
	say("posix_memalign(3, 8): %s\n", r ? strerrorname_np(r) : "0");
	p = malloc(100);
	errno = 0;
	q = realloc(p, 0);
	say("realloc(p, 0): %s errno=%s\n", q ? "a block" : "NULL", errno ? strerrorname_np(errno) : "0");
	free(q);
	/* an overflow the compiler cannot see coming */
	volatile size_t half = SIZE_MAX / 2;

	errno = 0;
	q = reallocarray(NULL, half, 4);
	say("reallocarray overflow: %s %s\n", q ? "a block" : "NULL", strerrorname_np(errno));
	errno = 0;
	q = calloc(half, 4);
	say("calloc overflow: %s %s\n", q ? "a block" : "NULL", strerrorname_np(errno));
	show("malloc(0)", p = malloc(0), 16, 0);
	free(p);
	burn_cpu(0.1);
	return 0;
}
