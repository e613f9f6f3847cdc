/*
 * util.c — see util.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util.h"

#define ARENA_BLOCK (256u * 1024u)
#define HUGE_MIN (4u << 20)

uint64_t util_fnv1a(const void *p, size_t n, uint64_t h)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

uint64_t util_fnv1a_str(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

uint32_t util_fnv1a32_str(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

uint64_t util_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

uint64_t util_hash_bytes(const void *p, size_t n, uint64_t seed)
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
	return util_mix64(h);
}

void util_hash_words2(const uint64_t *w, size_t n, uint64_t seed, uint64_t out[2])
{
	uint64_t a = seed ^ (n * 0x9e3779b97f4a7c15ull), b = ~seed + n * 0xc2b2ae3d27d4eb4full;

	for (size_t i = 0; i < n; i++) {
		a = (a ^ w[i]) * 0x9e3779b97f4a7c15ull;
		a ^= a >> 29;
		b = (b + w[i]) * 0xff51afd7ed558ccdull;
		b ^= b >> 32;
		b = (b << 13) | (b >> 51);
	}
	out[0] = util_mix64(a);
	out[1] = util_mix64(b ^ 0x165667b19e3779f9ull);
}

int util_mul(size_t a, size_t b, size_t *out)
{
	if (__builtin_mul_overflow(a, b, out))
		return -EOVERFLOW;
	return 0;
}

void *util_reallocarray(void *p, size_t n, size_t esz)
{
	size_t bytes;

	if (util_mul(n, esz, &bytes) < 0)
		return NULL;
	return realloc(p, bytes ? bytes : 1);
}

int util_grow(void **arr, size_t *cap, size_t n, size_t esz)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap <= n) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	p = util_reallocarray(*arr, ncap, esz);
	if (!p)
		return -ENOMEM;
	if (ncap * esz >= HUGE_MIN) {
		/* Large arrays in 2 MiB pages where the kernel offers them on
		 * request: a fault per 4 KiB page was a tenth of a large load. */
		uintptr_t a = ((uintptr_t)p + HUGE_MIN / 2 - 1) & ~(uintptr_t)(HUGE_MIN / 2 - 1);
		uintptr_t e = ((uintptr_t)p + ncap * esz) & ~(uintptr_t)(HUGE_MIN / 2 - 1);

		if (e > a)
			madvise((void *)a, e - a, MADV_HUGEPAGE);
	}
	*arr = p;
	*cap = ncap;
	return 0;
}

static int map_rehash(struct util_map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64, i;
	struct util_map_slot *ns = util_reallocarray(NULL, ncap, sizeof(*ns));

	if (!ns || ncap < m->cap) {
		free(ns);
		return -ENOMEM;
	}
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
	return 0;
}

uint32_t util_map_find(const struct util_map *m, uint64_t h, util_eq_fn eq, const void *ctx)
{
	size_t j;

	if (!m->cap)
		return UINT32_MAX;
	for (j = h & (m->cap - 1); m->slot[j].val != UINT32_MAX; j = (j + 1) & (m->cap - 1))
		if (m->slot[j].hash == h && eq(ctx, m->slot[j].val))
			return m->slot[j].val;
	return UINT32_MAX;
}

int util_map_put(struct util_map *m, uint64_t h, uint32_t val)
{
	size_t j;

	if ((m->n + 1) * 2 > m->cap && map_rehash(m) < 0)
		return -ENOMEM;
	for (j = h & (m->cap - 1); m->slot[j].val != UINT32_MAX; j = (j + 1) & (m->cap - 1))
		;
	m->slot[j].hash = h;
	m->slot[j].val = val;
	m->n++;
	return 0;
}

void util_map_free(struct util_map *m)
{
	free(m->slot);
	memset(m, 0, sizeof(*m));
}

char *util_arena_strndup(struct util_arena *a, const char *s, size_t n)
{
	struct util_arena_block *b = a->head;
	char *d;

	if (n >= SIZE_MAX - sizeof(*b) - 1)
		return NULL;
	if (!b || b->cap - b->used < n + 1) {
		size_t cap = n + 1 > ARENA_BLOCK ? n + 1 : ARENA_BLOCK;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
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

void util_arena_free(struct util_arena *a)
{
	struct util_arena_block *b = a->head, *next;

	for (; b; b = next) {
		next = b->next;
		free(b);
	}
	a->head = NULL;
}

struct str_probe {
	const struct util_strings *t;
	const char *s;
};

static int str_eq(const void *ctx, uint32_t val)
{
	const struct str_probe *p = ctx;

	return strcmp(p->t->s[val], p->s) == 0;
}

const char *util_intern(struct util_arena *a, struct util_strings *t, const char *s)
{
	struct str_probe probe = {t, s ? s : ""};
	size_t len = strlen(probe.s);
	uint64_t h = util_hash_bytes(probe.s, len, 0x5354);
	uint32_t v = util_map_find(&t->map, h, str_eq, &probe);
	char *copy;

	if (v != UINT32_MAX)
		return t->s[v];
	if (t->n >= UINT32_MAX - 1 || util_grow((void **)&t->s, &t->cap, t->n, sizeof(*t->s)) < 0)
		return NULL;
	copy = util_arena_strndup(a, probe.s, len);
	if (!copy || util_map_put(&t->map, h, (uint32_t)t->n) < 0)
		return NULL;
	t->s[t->n++] = copy;
	return copy;
}

void util_strings_free(struct util_strings *t)
{
	util_map_free(&t->map);
	free(t->s);
	memset(t, 0, sizeof(*t));
}

/* --- units ------------------------------------------------------------------- */

const char *util_base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : (path ? path : "");
}

int util_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int util_ival_cmp(const void *a, const void *b)
{
	const struct util_ival *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

size_t util_ival_union(struct util_ival *v, size_t n, uint64_t *len)
{
	uint64_t total = 0;
	size_t i, m = 0;

	if (n)
		qsort(v, n, sizeof(*v), util_ival_cmp);
	for (i = 0; i < n; i++) {
		if (m && v[i].s <= v[m - 1].e) {
			if (v[i].e > v[m - 1].e)
				v[m - 1].e = v[i].e;
		} else {
			v[m++] = v[i];
		}
	}
	for (i = 0; i < m; i++)
		total += v[i].e - v[i].s;
	if (len)
		*len = total;
	return m;
}

char *util_fmt_size(char *buf, size_t len, double b, enum util_size style)
{
	static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
	int gate = style == UTIL_SIZE_GATE;
	int u = -1, last = gate ? 2 : 4;   /* the gate's stop at GiB */
	double v = b < 0 ? -b : b;

	/* a NaN: the gate's in GiB, the report's in bytes */
	while ((gate ? !(v < 1024.0) : v >= 1024.0) && u < last) {
		v /= 1024.0;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%.0f B", b);
	else
		snprintf(buf, len, "%s%.*f %s", b < 0 ? "-" : "", gate && u < 2 ? 1 : 2, v,
			 unit[u]);
	return buf;
}

char *util_fmt_bytes(char *buf, size_t len, double b)
{
	return util_fmt_size(buf, len, b, UTIL_SIZE_REPORT);
}

char *util_fmt_rate(char *buf, size_t len, double bytes_per_s)
{
	size_t n;

	util_fmt_bytes(buf, len, bytes_per_s);
	n = strlen(buf);
	if (n + 2 < len)
		memcpy(buf + n, "/s", 3);
	return buf;
}

char *util_fmt_ns(char *buf, size_t len, double ns, enum util_dur style)
{
	/* from: where the unit starts for TABLE and PROSE, the value that
	 * prints as 1.000 of it; the gate's starts at the unit itself */
	static const struct {
		double scale, from;
		const char *unit;
	} u[] = { { 1e9, 1e9 - 5e5, "s" }, { 1e6, 1e6 - 5e2, "ms" }, { 1e3, 1e3 - 0.5, "us" },
		  { 1, 0, "ns" } };
	int gate = style == UTIL_DUR_GATE;
	size_t i, last = style == UTIL_DUR_TABLE ? 2 : 3;   /* tables never say ns */
	double v = gate && ns < 0 ? -ns : ns;
	int prec;

	/* a NaN: the gate's in seconds, the others' in their smallest unit */
	for (i = 0; i < last; i++)
		if (gate ? !(v < u[i].scale) : v >= u[i].from)
			break;
	prec = i == 3 ? 0 : gate && i > 0 ? 1 : 3;
	snprintf(buf, len, "%.*f%s%s", prec, ns / u[i].scale, style == UTIL_DUR_TABLE ? "" : " ",
		 u[i].unit);
	return buf;
}

char *util_fmt_time(char *buf, size_t len, double ns)
{
	return util_fmt_ns(buf, len, ns, UTIL_DUR_TABLE);
}

char *util_fmt_dur(char *buf, size_t len, double ns)
{
	return util_fmt_ns(buf, len, ns, UTIL_DUR_PROSE);
}

int util_read_small(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	e = errno;
	close(fd);
	if (n < 0)
		return -e;
	buf[n] = 0;
	return (int)n;
}
