/*
 * test_profile_builder.h — how every hand-built struct profile of the tests
 * grows its arrays and frees them (the pb_, cb_ and ex_ builders, and tests
 * that add rows of their own): pb_grow / PB_ADD / PB_SLOT grow an array,
 * pb_profile_free frees them.  An array grown here is the builder's, and
 * pb_profile_free frees only those, so a test may attach arrays of its own
 * (static, on its stack, or malloc'd and freed by itself) to the same
 * profile.  Growing an array the test attached is refused (abort): its size
 * is not known here.  Aborts on allocation failure (test code).
 */
#ifndef CBN_TEST_PROFILE_BUILDER_H
#define CBN_TEST_PROFILE_BUILDER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

/* The arrays the builder allocated and has not freed (this test's). */
#define PB_OWNED_MAX 4096

static inline void **pb_owned(size_t **n)
{
	static void *owned[PB_OWNED_MAX];
	static size_t nowned;

	*n = &nowned;
	return owned;
}

static inline long pb_owned_find(const void *arr)
{
	size_t *n, i;
	void **owned = pb_owned(&n);

	for (i = 0; arr && i < *n; i++)
		if (owned[i] == arr)
			return (long)i;
	return -1;
}

/*
 * arr (n elements of size bytes, grown here or NULL) with room for element
 * n: its capacity doubles at each power of two (one realloc per element is
 * quadratic under ASan, whose realloc always copies).
 */
static inline void *pb_grow(void *arr, size_t n, size_t size)
{
	size_t *nowned;
	void **owned = pb_owned(&nowned);
	long at = pb_owned_find(arr);
	void *np;

	if (arr && at < 0) {
		fprintf(stderr, "test builder: an array the test attached cannot grow\n");
		abort();
	}
	if (arr && n & (n - 1))
		return arr; /* room up to the next power of two */
	np = realloc(arr, (n ? 2 * n : 1) * size);
	if (!np) {
		fprintf(stderr, "test builder: out of memory\n");
		abort();
	}
	if (at >= 0) {
		owned[at] = np;
	} else {
		if (*nowned == PB_OWNED_MAX) {
			fprintf(stderr, "test builder: more than %d arrays\n", PB_OWNED_MAX);
			abort();
		}
		owned[(*nowned)++] = np;
	}
	return np;
}

/* Append val to arr (n elements), n grows by one. */
#define PB_ADD(arr, n, val)                                              \
	do {                                                             \
		(arr) = pb_grow((arr), (size_t)(n), sizeof(*(arr)));     \
		(arr)[(n)] = (val);                                      \
		(n)++;                                                   \
	} while (0)

/* The next element of arr (n elements), not initialised; n grows by one. */
#define PB_SLOT(arr, n) \
	((arr) = pb_grow((arr), (size_t)(n), sizeof(*(arr))), &(arr)[(n)++])

/* A zeroed array of n elements, the builder's (it may grow like the
 * others: its capacity is the next power of two). */
static inline void *pb_alloc(size_t n, size_t size)
{
	size_t cap = 1;
	void *arr;

	while (cap < n)
		cap *= 2;
	arr = pb_grow(NULL, cap / 2, size);
	memset(arr, 0, cap * size);
	return arr;
}

/* Free arr when the builder allocated it (else leave it to the test). */
static inline void pb_release(void *arr)
{
	size_t *nowned;
	void **owned = pb_owned(&nowned);
	long at = pb_owned_find(arr);

	if (at < 0)
		return;
	free(arr);
	owned[at] = owned[--*nowned];
}

/* Free arr, the test's or the builder's (a test freeing a profile's array
 * before pb_profile_free). */
static inline void pb_drop(void *arr)
{
	if (pb_owned_find(arr) >= 0)
		pb_release(arr);
	else
		free(arr);
}

/* Free every array of p the builder allocated; p is zeroed. */
static inline void pb_profile_free(struct profile *p)
{
	void *arrays[] = {
		p->funcs,     p->frames,   p->stacks,      p->samples,     p->threads,
		p->processes, p->warnings, p->nodebug_modules, p->modules, p->devices,
		p->contexts,  p->cuda_api, p->gpu_ops,     p->ranges,      p->syncs,
		p->cuda_status, p->cuda_shares, p->mem_allocs, p->mem_frees,
		p->mem_counters, p->windows, p->offcpu, p->memory, p->mempools,
		p->unwind_stops,
	};
	size_t i;

	for (i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
		pb_release(arrays[i]);
	memset(p, 0, sizeof(*p));
}

#endif
