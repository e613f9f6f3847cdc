/*
 * sym_util.c — the symbolizer's plumbing: an open-addressing hash map, string
 * interning in context-owned arena chunks, and C++ demangling through a
 * libstdc++ found at run time (so the launcher itself links no C++).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sym_int.h"
#include "util.h"

static uint64_t sym_mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ b;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

int sym_map_get(const struct sym_map *m, uint64_t tag, uint64_t key, uint64_t *val)
{
	if (!m->cap)
		return 0;
	size_t mask = m->cap - 1;
	for (size_t i = sym_mix(tag, key) & mask;; i = (i + 1) & mask) {
		const struct sym_map_ent *e = &m->ent[i];
		if (!e->tag)
			return 0;
		if (e->tag == tag && e->key == key) {
			*val = e->val;
			return 1;
		}
	}
}

static void sym_map_insert(struct sym_map_ent *ent, size_t cap, uint64_t tag, uint64_t key,
			   uint64_t val)
{
	size_t mask = cap - 1;
	size_t i = sym_mix(tag, key) & mask;

	while (ent[i].tag && !(ent[i].tag == tag && ent[i].key == key))
		i = (i + 1) & mask;
	ent[i].tag = tag;
	ent[i].key = key;
	ent[i].val = val;
}

/* Inserts or overwrites.  Returns 0 or -ENOMEM (map unchanged). */
int sym_map_put(struct sym_map *m, uint64_t tag, uint64_t key, uint64_t val)
{
	if ((m->n + 1) * 4 >= m->cap * 3) {
		size_t ncap = m->cap ? m->cap * 2 : 1024;
		struct sym_map_ent *ne = calloc(ncap, sizeof(*ne));
		if (!ne)
			return -12;
		for (size_t i = 0; i < m->cap; i++)
			if (m->ent[i].tag)
				sym_map_insert(ne, ncap, m->ent[i].tag, m->ent[i].key,
					       m->ent[i].val);
		free(m->ent);
		m->ent = ne;
		m->cap = ncap;
	}
	uint64_t old;
	if (!sym_map_get(m, tag, key, &old))
		m->n++;
	sym_map_insert(m->ent, m->cap, tag, key, val);
	return 0;
}

void sym_map_free(struct sym_map *m)
{
	free(m->ent);
	m->ent = NULL;
	m->cap = m->n = 0;
}

static char *sym_arena_alloc(struct sym_ctx *ctx, size_t len)
{
	struct sym_chunk *c = ctx->chunks;

	if (!c || c->cap - c->used < len) {
		size_t cap = len > 60000 ? len : 65536 - sizeof(*c);
		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->cap = cap;
		c->used = 0;
		c->next = ctx->chunks;
		ctx->chunks = c;
	}
	char *p = c->data + c->used;
	c->used += len;
	return p;
}

static uint32_t sym_strhash(const char *s, size_t len)
{
	return (uint32_t)util_fnv1a(s, len, UTIL_FNV_INIT);
}

static int sym_strset_grow(struct sym_strset *set)
{
	size_t ncap = set->cap ? set->cap * 2 : 4096;
	const char **ns = calloc(ncap, sizeof(*ns));
	uint32_t *nh = calloc(ncap, sizeof(*nh));

	if (!ns || !nh) {
		free(ns);
		free(nh);
		return -12;
	}
	for (size_t i = 0; i < set->cap; i++) {
		if (!set->slot[i])
			continue;
		size_t j = set->hash[i] & (ncap - 1);
		while (ns[j])
			j = (j + 1) & (ncap - 1);
		ns[j] = set->slot[i];
		nh[j] = set->hash[i];
	}
	free(set->slot);
	free(set->hash);
	set->slot = ns;
	set->hash = nh;
	set->cap = ncap;
	return 0;
}

/* Returns the one copy of s[0..len) owned by ctx; "" on allocation failure,
 * so callers never see NULL. */
const char *sym_intern(struct sym_ctx *ctx, const char *s, size_t len)
{
	struct sym_strset *set = &ctx->strs;
	uint32_t h = sym_strhash(s, len);

	if ((set->n + 1) * 2 >= set->cap && sym_strset_grow(set) < 0)
		return "";
	size_t mask = set->cap - 1;
	size_t i = h & mask;
	for (; set->slot[i]; i = (i + 1) & mask) {
		if (set->hash[i] == h && strncmp(set->slot[i], s, len) == 0 &&
		    set->slot[i][len] == '\0')
			return set->slot[i];
	}
	char *p = sym_arena_alloc(ctx, len + 1);
	if (!p)
		return "";
	memcpy(p, s, len);
	p[len] = '\0';
	set->slot[i] = p;
	set->hash[i] = h;
	set->n++;
	return p;
}

const char *sym_intern_str(struct sym_ctx *ctx, const char *s)
{
	return sym_intern(ctx, s ? s : "", s ? strlen(s) : 0);
}

void sym_util_free(struct sym_ctx *ctx)
{
	struct sym_chunk *c = ctx->chunks;

	while (c) {
		struct sym_chunk *next = c->next;
		free(c);
		c = next;
	}
	ctx->chunks = NULL;
	free(ctx->strs.slot);
	free(ctx->strs.hash);
	memset(&ctx->strs, 0, sizeof(ctx->strs));
	sym_map_free(&ctx->map);
}

/* __cxa_demangle from whatever libstdc++ the system has.  The handle is never
 * closed: libstdc++ is not meant to be unloaded. */
typedef char *(*sym_cxa_demangle_fn)(const char *, char *, size_t *, int *);
static sym_cxa_demangle_fn sym_cxa_demangle;
static pthread_once_t sym_demangle_once = PTHREAD_ONCE_INIT;

static void sym_demangle_init(void)
{
	void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);

	if (!h)
		return;
	*(void **)&sym_cxa_demangle = dlsym(h, "__cxa_demangle");
}

int sym_demangle_available(void)
{
	pthread_once(&sym_demangle_once, sym_demangle_init);
	return sym_cxa_demangle != NULL;
}

const char *sym_demangle(struct sym_ctx *ctx, const char *name)
{
	if (!name)
		return sym_intern_str(ctx, "");
	/* Itanium names start with _Z; __cxa_demangle would also "demangle"
	 * plain words such as "i" into type names, so gate it. */
	if (name[0] != '_' || name[1] != 'Z' || !sym_demangle_available())
		return sym_intern_str(ctx, name);
	int status = -1;
	char *d = sym_cxa_demangle(name, NULL, NULL, &status);
	const char *r = sym_intern_str(ctx, status == 0 && d ? d : name);
	free(d);
	return r;
}
