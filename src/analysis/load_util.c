/*
 * load_util.c — the loader's small containers: a string arena that owns every
 * string of a profile, growable arrays, an open-addressing hash index and
 * string interning.  Out of memory is fatal here (launcher side): a profile
 * that cannot be built has nothing useful to degrade to.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>

#include "load_int.h"

#define ARENA_BLOCK (256u * 1024u)
#define HUGE_MIN (4u << 20)

void *load_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q) {
		fprintf(stderr, "cbottleneck: out of memory loading the session (%zu bytes)\n", n);
		exit(125);
	}
	if (n >= HUGE_MIN) {
		/* Large arrays in 2 MiB pages where the kernel offers them on
		 * request: a fault per 4 KiB page was a tenth of a large load. */
		uintptr_t a = ((uintptr_t)q + HUGE_MIN / 2 - 1) & ~(uintptr_t)(HUGE_MIN / 2 - 1);
		uintptr_t e = ((uintptr_t)q + n) & ~(uintptr_t)(HUGE_MIN / 2 - 1);

		if (e > a)
			madvise((void *)a, e - a, MADV_HUGEPAGE);
	}
	return q;
}

void load_grow(void **arr, size_t *cap, size_t n, size_t esz)
{
	size_t ncap;

	if (n < *cap)
		return;
	ncap = *cap ? *cap * 2 : 16;
	while (ncap <= n)
		ncap *= 2;
	*arr = load_xrealloc(*arr, ncap * esz);
	*cap = ncap;
}

char *load_arena_strndup(struct load_arena *a, const char *s, size_t n)
{
	struct load_arena_block *b = a->head;
	char *d;

	if (!b || b->cap - b->used < n + 1) {
		size_t cap = n + 1 > ARENA_BLOCK ? n + 1 : ARENA_BLOCK;
		b = load_xrealloc(NULL, sizeof(*b) + cap);
		b->cap = cap;
		b->used = 0;
		b->next = a->head;
		a->head = b;
	}
	d = b->data + b->used;
	memcpy(d, s, n);
	d[n] = '\0';
	b->used += n + 1;
	return d;
}

void load_arena_free(struct load_arena *a)
{
	struct load_arena_block *b = a->head, *next;

	for (; b; b = next) {
		next = b->next;
		free(b);
	}
	a->head = NULL;
}

uint64_t load_hash_u64(uint64_t x)
{
	/* splitmix64 finalizer */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

uint64_t load_hash_bytes(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *b = p;
	uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ull), w;

	while (n >= 8) {
		memcpy(&w, b, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
		b += 8;
		n -= 8;
	}
	w = 0;
	memcpy(&w, b, n);
	h = (h ^ w) * 0x9e3779b97f4a7c15ull;
	return load_hash_u64(h);
}

void load_hash_words2(const uint64_t *w, size_t n, uint64_t seed, uint64_t out[2])
{
	uint64_t a = seed ^ (n * 0x9e3779b97f4a7c15ull), b = ~seed + n * 0xc2b2ae3d27d4eb4full;
	size_t i;

	for (i = 0; i < n; i++) {
		a = (a ^ w[i]) * 0x9e3779b97f4a7c15ull;
		a ^= a >> 29;
		b = (b + w[i]) * 0xff51afd7ed558ccdull;
		b ^= b >> 32;
		b = (b << 13) | (b >> 51);
	}
	out[0] = load_hash_u64(a);
	out[1] = load_hash_u64(b ^ 0x165667b19e3779f9ull);
}

static void map_rehash(struct load_map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64, i;
	struct load_map_slot *ns = load_xrealloc(NULL, ncap * sizeof(*ns));

	for (i = 0; i < ncap; i++)
		ns[i].val = UINT32_MAX;
	for (i = 0; i < m->cap; i++) {
		size_t j;
		if (m->slot[i].val == UINT32_MAX)
			continue;
		for (j = m->slot[i].hash & (ncap - 1); ns[j].val != UINT32_MAX; j = (j + 1) & (ncap - 1))
			;
		ns[j] = m->slot[i];
	}
	free(m->slot);
	m->slot = ns;
	m->cap = ncap;
}

uint32_t load_map_find(const struct load_map *m, uint64_t h, load_eq_fn eq, const void *ctx)
{
	size_t j;

	if (!m->cap)
		return UINT32_MAX;
	for (j = h & (m->cap - 1); m->slot[j].val != UINT32_MAX; j = (j + 1) & (m->cap - 1))
		if (m->slot[j].hash == h && eq(ctx, m->slot[j].val))
			return m->slot[j].val;
	return UINT32_MAX;
}

void load_map_put(struct load_map *m, uint64_t h, uint32_t val)
{
	size_t j;

	if ((m->n + 1) * 2 > m->cap)
		map_rehash(m);
	for (j = h & (m->cap - 1); m->slot[j].val != UINT32_MAX; j = (j + 1) & (m->cap - 1))
		;
	m->slot[j].hash = h;
	m->slot[j].val = val;
	m->n++;
}

void load_map_free(struct load_map *m)
{
	free(m->slot);
	memset(m, 0, sizeof(*m));
}

struct str_probe {
	const struct load_strings *t;
	const char *s;
};

static int str_eq(const void *ctx, uint32_t val)
{
	const struct str_probe *p = ctx;

	return strcmp(p->t->s[val], p->s) == 0;
}

const char *load_intern(struct load_arena *a, struct load_strings *t, const char *s)
{
	struct str_probe probe = {t, s ? s : ""};
	uint64_t h;
	uint32_t v;

	h = load_hash_bytes(probe.s, strlen(probe.s), 0x5354);
	v = load_map_find(&t->map, h, str_eq, &probe);
	if (v != UINT32_MAX)
		return t->s[v];
	*LOAD_PUSH(t->s, t->n, t->cap) = load_arena_strndup(a, probe.s, strlen(probe.s));
	load_map_put(&t->map, h, (uint32_t)(t->n - 1));
	return t->s[t->n - 1];
}

void load_strings_free(struct load_strings *t)
{
	load_map_free(&t->map);
	free(t->s);
	memset(t, 0, sizeof(*t));
}
