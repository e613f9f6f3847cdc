/*
 * sym_util.c — the symbolizer's plumbing: an open-addressing hash map, string
 * interning in context-owned arena chunks, and C++ demangling through a
 * libstdc++ found at run time (so the launcher itself links no C++).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
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

/*
 * A source path as the tables show it: "dir/../" and "./" taken out by the
 * letters alone (clang records libstdc++'s headers as
 * "/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/bits/stl_algo.h",
 * GCC as "/usr/include/c++/12/bits/stl_algo.h": one file, one name).  A ".."
 * that would climb above the root, or the start of a relative path, stays.
 */
const char *sym_intern_path(struct sym_ctx *ctx, const char *s)
{
	char out[4096];
	size_t keep[256], nkeep = 0, len = 0;
	const char *p = s;

	if (!s || (!strstr(s, "/../") && !strstr(s, "/./")) || strlen(s) >= sizeof(out))
		return sym_intern_str(ctx, s);
	if (*p == '/')
		out[len++] = *p++;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 1 && p[0] == '.') {
			/* dropped */
		} else if (n == 2 && p[0] == '.' && p[1] == '.' && nkeep &&
			   !(len - keep[nkeep - 1] == 3 &&
			     !strncmp(out + keep[nkeep - 1], "../", 3))) {
			len = keep[--nkeep];
		} else if (n && nkeep < sizeof(keep) / sizeof(keep[0])) {
			keep[nkeep++] = len;
			memcpy(out + len, p, n);
			len += n;
			out[len++] = '/';
		} else if (n) {
			return sym_intern_str(ctx, s);
		}
		p += n;
		p += *p == '/';
	}
	if (len > 1 && out[len - 1] == '/')
		len--;
	return sym_intern(ctx, out, len);
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

/*
 * A Rust name in rustc's legacy mangling, as __cxa_demangle leaves it
 * ("hashbrown::rustc_entry::_$LT$impl$u20$hashbrown..map..HashMap$LT$K$C$V$GT$$GT$
 * ::rustc_entry::h0123456789abcdef"), written in place as rustc-demangle and
 * perf write it: the hash gone, the escapes decoded
 * ("hashbrown::rustc_entry::<impl hashbrown::map::HashMap<K,V>>::rustc_entry"),
 * a " [clone .llvm.N]" after it kept.  Only a name whose path ends in "::h"
 * and 16 hex digits is one; an escape it does not know ends the decoding,
 * the rest kept as it was.
 */
static void sym_rust_legacy(char *s)
{
	static const char *const esc[][2] = {{"SP", "@"}, {"BP", "*"}, {"RF", "&"}, {"LT", "<"},
					     {"GT", ">"}, {"LP", "("}, {"RP", ")"}, {"C", ","}};
	char *clone = strstr(s, " [clone "), *r = s, *w = s, *end;
	size_t n = clone ? (size_t)(clone - s) : strlen(s), i;

	if (n < 19 || strncmp(s + n - 19, "::h", 3) != 0 ||
	    strspn(s + n - 16, "0123456789abcdef") < 16)
		return;
	end = s + n - 19;
	while (r < end) {
		char *close = r[0] == '$' ? memchr(r + 1, '$', (size_t)(end - r - 1)) : NULL;
		size_t len = close ? (size_t)(close - r - 1) : 0;
		unsigned long c = 0;

		/* at a component's start: the output so far ends in "::" */
		if (r[0] == '_' && r[1] == '$' &&
		    (w == s || (w - s >= 2 && w[-1] == ':' && w[-2] == ':'))) {
			r++; /* a component may not start with '$': rustc put '_' first */
			continue;
		}
		if (r[0] == '.' && r + 1 < end && r[1] == '.') {
			*w++ = ':';
			*w++ = ':';
			r += 2;
			continue;
		}
		if (r[0] != '$') {
			*w++ = *r++;
			continue;
		}
		for (i = 0; len && i < sizeof(esc) / sizeof(esc[0]); i++)
			if (strlen(esc[i][0]) == len && !strncmp(r + 1, esc[i][0], len))
				break;
		if (len && i < sizeof(esc) / sizeof(esc[0])) {
			*w++ = esc[i][1][0];
		} else if (len >= 2 && len <= 3 && r[1] == 'u' &&
			   strspn(r + 2, "0123456789abcdef") >= len - 1 &&
			   (c = strtoul(r + 2, NULL, 16)) >= 0x20 && c < 0x7f) {
			*w++ = (char)c;
		} else {
			memmove(w, r, (size_t)(end - r));
			w += end - r;
			break;
		}
		r = close + 1;
	}
	memmove(w, clone ? clone : "", clone ? strlen(clone) + 1 : 1);
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
	const char *dot = strchr(name, '.');
	if ((status != 0 || !d) && dot && dot - name < 4096) {
		/* a suffix __cxa_demangle takes on functions' names only (a
		 * Rust name's ".llvm.N"): the name before it, then the suffix */
		char head[4096], *full;
		memcpy(head, name, (size_t)(dot - name));
		head[dot - name] = '\0';
		free(d);
		d = sym_cxa_demangle(head, NULL, NULL, &status);
		size_t size = d ? strlen(d) + strlen(dot) + 10 : 0;
		if (status == 0 && d && (full = malloc(size))) {
			snprintf(full, size, "%s [clone %s]", d, dot);
			free(d);
			d = full;
		} else {
			status = -1;
		}
	}
	if (status == 0 && d)
		sym_rust_legacy(d);
	const char *r = sym_intern_str(ctx, status == 0 && d ? d : name);
	free(d);
	return r;
}
