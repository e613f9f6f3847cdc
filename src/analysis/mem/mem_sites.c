/*
 * mem_sites.c — where host memory is allocated: the allocator frames a
 * site looks past (malloc, operator new, the allocators of C++ libraries),
 * the site of each sampled allocation, and the sites in report order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "mem_int.h"
#include "util.h"

/* --- sites in order, leaks ------------------------------------------------- */

static int site_bytes_cmp(const void *a, const void *b, void *ctx)
{
	const struct mem_site *s = ctx;
	const uint32_t *x = a, *y = b;

	if (s[*x].bytes != s[*y].bytes)
		return s[*x].bytes > s[*y].bytes ? -1 : 1;
	return *x < *y ? -1 : *x > *y;
}

static int leak_cmp(const void *a, const void *b, void *ctx)
{
	const struct mem_site *s = ctx;
	const uint32_t *x = a, *y = b;

	if (s[*x].live_end_bytes != s[*y].live_end_bytes)
		return s[*x].live_end_bytes > s[*y].live_end_bytes ? -1 : 1;
	return *x < *y ? -1 : *x > *y;
}

/* Sites by bytes desc (every space's at_peak renumbered), then the leaks. */
int mem_sites_finish(struct mem_analysis *m)
{
	uint32_t *order, *rank;
	struct mem_site *sorted;
	double best;
	size_t i, j;

	if (!m->nsites)
		return 0;
	order = calloc(m->nsites, sizeof(*order));
	rank = calloc(m->nsites, sizeof(*rank));
	sorted = calloc(m->nsites, sizeof(*sorted));
	if (!order || !rank || !sorted) {
		free(order);
		free(rank);
		free(sorted);
		return -ENOMEM;
	}
	for (i = 0; i < m->nsites; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, m->nsites, sizeof(*order), site_bytes_cmp, m->sites);
	for (i = 0; i < m->nsites; i++) {
		sorted[i] = m->sites[order[i]];
		rank[order[i]] = (uint32_t)i;
	}
	free(m->sites);
	m->sites = sorted;
	for (i = 0; i < m->nspaces; i++)
		for (j = 0; j < m->spaces[i].nat_peak; j++)
			if (m->spaces[i].at_peak[j].site < m->nsites)
				m->spaces[i].at_peak[j].site = rank[m->spaces[i].at_peak[j].site];
	free(rank);
	/* an arena site holds most of its blocks at the end in the arena */
	m->arena_end_bytes = 0;
	m->arena_top = NULL;
	for (i = 0, best = 0; i < m->nsites; i++) {
		struct mem_site *s = &m->sites[i];

		if (s->arena && s->arena_end_bytes < 0.5 * s->live_end_bytes)
			s->arena = NULL;
		if (!s->arena)
			continue;
		m->arena_end_bytes += s->live_end_bytes;
		if (s->live_end_bytes > best) {
			best = s->live_end_bytes;
			m->arena_top = s->arena;
		}
	}
	m->nleaks = 0;
	for (i = 0; i < m->nsites; i++)
		if (m->sites[i].live_end_bytes >= 0.5 && !m->sites[i].arena)
			order[m->nleaks++] = (uint32_t)i;
	qsort_r(order, m->nleaks, sizeof(*order), leak_cmp, m->sites);
	free(m->leaks);
	m->leaks = order;
	if (!m->nleaks) {
		free(m->leaks);
		m->leaks = NULL;
	}
	return 0;
}

enum site_key_kind { SK_BYTES, SK_ALLOCS, SK_LEAKED, SK_PEAK, SK_AVG };

static const struct { const char *name; enum site_key_kind key; } site_keys[] = {
	{ "mem", SK_BYTES }, { "allocs", SK_ALLOCS }, { "leaked", SK_LEAKED },
	{ "peak", SK_PEAK }, { "avg_size", SK_AVG },
};

int mem_sort_key_valid(const char *key)
{
	size_t i;

	for (i = 0; key && i < sizeof(site_keys) / sizeof(site_keys[0]); i++)
		if (strcmp(site_keys[i].name, key) == 0)
			return 1;
	return 0;
}

static double site_value(const struct mem_site *s, enum site_key_kind k)
{
	switch (k) {
	case SK_BYTES: return s->bytes;
	case SK_ALLOCS: return s->allocs;
	case SK_LEAKED: return s->live_end_bytes;
	case SK_PEAK: return s->max_live;
	case SK_AVG: return s->allocs > 0 ? s->bytes / s->allocs : 0;
	}
	return 0;
}

struct sort_ctx {
	const struct mem_site *sites;
	enum site_key_kind key;
};

static int site_key_cmp(const void *a, const void *b, void *ctx)
{
	const struct sort_ctx *c = ctx;
	const uint32_t *x = a, *y = b;
	double vx = site_value(&c->sites[*x], c->key), vy = site_value(&c->sites[*y], c->key);

	if (vx != vy)
		return vx > vy ? -1 : 1;
	return *x < *y ? -1 : *x > *y;
}

long mem_sorted_sites(const struct mem_analysis *m, uint32_t kind, const char *key,
		      uint32_t **idx)
{
	struct sort_ctx c = { m->sites, SK_BYTES };
	size_t i, n = 0;

	*idx = NULL;
	for (i = 0; key && i < sizeof(site_keys) / sizeof(site_keys[0]); i++)
		if (strcmp(site_keys[i].name, key) == 0)
			c.key = site_keys[i].key;
	for (i = 0; i < m->nsites; i++)
		n += m->sites[i].kind == kind;
	if (!n)
		return 0;
	if (!(*idx = calloc(n, sizeof(**idx))))
		return -ENOMEM;
	n = 0;
	for (i = 0; i < m->nsites; i++)
		if (m->sites[i].kind == kind)
			(*idx)[n++] = (uint32_t)i;
	qsort_r(*idx, n, sizeof(**idx), site_key_cmp, &c);
	return (long)n;
}


/* --- allocator frames ------------------------------------------------------ */

/* The qualified name of a demangled function, without a leading return type
 * (function templates print one) or the parameter list: "int* ns::f<T>(...)"
 * -> "ns::f<T>".  Returns a pointer into name and the length. */
static const char *qual_name(const char *name, size_t *len)
{
	const char *s = name, *q;
	int depth = 0;

	for (q = name; *q; q++) {
		if (*q == '<')
			depth++;
		else if (*q == '>' && depth > 0)
			depth--;
		else if (depth == 0 && *q == '(' && q != name)
			break;
		else if (depth == 0 && *q == ' ' && strncmp(q + 1, "operator", 8) != 0 &&
			 strncmp(s, "operator", 8) != 0)
			s = q + 1;  /* the return type ends here */
	}
	*len = (size_t)(q - s);
	return s;
}

static int starts(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && memcmp(s, prefix, k) == 0;
}

static int ends(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* The standard library's allocator templates, even inlined: by the header
 * that defines them or by their name. */
static const char *const alloc_headers[] = {
	"/bits/new_allocator.h", "/ext/new_allocator.h", "/bits/allocator.h",
	"/bits/alloc_traits.h", "/ext/alloc_traits.h", "/bits/allocated_ptr.h",
	"/ext/malloc_allocator.h", "/bits/stl_construct.h",
};
static const char *const alloc_prefixes[] = {
	"std::allocator<", "std::__new_allocator<", "__gnu_cxx::new_allocator<",
	"std::allocator_traits<", "__gnu_cxx::__alloc_traits<", "std::__allocated_ptr<",
	"__gnu_cxx::malloc_allocator<", "std::__allocate_guarded", "std::allocator::",
	"std::__new_allocator::", "std::allocator_traits::",
	"operator new", "operator delete", "cbn_", "__libc_", "__GI_",
};
static const char *const alloc_names[] = {
	"malloc", "calloc", "realloc", "free", "posix_memalign", "aligned_alloc", "memalign",
	"valloc", "pvalloc", "reallocarray", "mmap", "mmap64", "mremap", "munmap", "sbrk",
	"brk", "_int_malloc", "_int_realloc", "_int_memalign", "tcache_init", "sysmalloc",
	"malloc_hook_ini", "_mid_memalign",
};
/* Libraries whose every frame works for its caller: libc (strdup, fopen ...),
 * libstdc++ (operator new, std::string ...), the dynamic loader (dlopen) and
 * cbottleneck's own. */
static const char *const alloc_modules[] = {
	"libc.so", "libc-", "libstdc++.so", "ld-linux", "ld64.so", "libcbottleneck",
};

int mem_frame_is_allocator(const struct profile *p, const struct prof_frame *fr)
{
	const struct prof_func *f;
	const char *name, *q, *mod;
	size_t i, n;

	if (fr->func >= p->nfuncs)
		return 0;
	f = &p->funcs[fr->func];
	mod = util_base_name(f->module ? f->module : "");
	for (i = 0; i < sizeof(alloc_modules) / sizeof(alloc_modules[0]); i++)
		if (strncmp(mod, alloc_modules[i], strlen(alloc_modules[i])) == 0)
			return 1;
	for (i = 0; f->file && i < sizeof(alloc_headers) / sizeof(alloc_headers[0]); i++)
		if (ends(f->file, alloc_headers[i]))
			return 1;
	name = f->name ? f->name : "";
	q = qual_name(name, &n);
	for (i = 0; i < sizeof(alloc_prefixes) / sizeof(alloc_prefixes[0]); i++)
		if (starts(q, n, alloc_prefixes[i]))
			return 1;
	for (i = 0; i < sizeof(alloc_names) / sizeof(alloc_names[0]); i++)
		if (n == strlen(alloc_names[i]) && memcmp(q, alloc_names[i], n) == 0)
			return 1;
	return 0;
}

/* The site frame of a stack: the first frame, leaf first, outside the
 * allocator and its wrappers (mem_wrap.c: wrap may be NULL); the innermost
 * frame when every frame is the allocator's; NULL for no stack.  *via: the
 * outermost wrapper it looked past, PROF_NONE. */
static const struct prof_frame *site_frame(const struct profile *p, const uint8_t *wrap,
					   uint32_t stack, uint32_t *via)
{
	const struct prof_stack *s;
	uint32_t i;

	*via = PROF_NONE;
	if (stack >= p->nstacks || !p->stacks[stack].nframes)
		return NULL;
	s = &p->stacks[stack];
	if ((uint64_t)s->first + s->nframes > p->nframes)
		return NULL;
	for (i = 0; i < s->nframes; i++) {
		const struct prof_frame *fr = &p->frames[s->first + i];

		if (mem_frame_is_allocator(p, fr))
			continue;
		if (wrap && fr->func < p->nfuncs && (wrap[fr->func] & MW_SKIP)) {
			*via = fr->func;
			continue;
		}
		return fr;
	}
	return &p->frames[s->first];
}


struct site_key {
	uint32_t func, line;
	const char *file;
};

static int site_eq(const void *ctx, uint32_t v)
{
	const struct host_ctx *h = ((const void *const *)ctx)[0];
	const struct site_key *k = ((const void *const *)ctx)[1];
	const struct mem_site *s = &h->m->sites[v];

	return s->func == k->func && s->line == k->line && strcmp(s->file, k->file) == 0;
}

long mem_site_of(struct host_ctx *h, uint32_t stack)
{
	const struct prof_frame *fr;
	struct site_key k = { PROF_NONE, 0, "" };
	const void *probe[2] = { h, &k };
	struct mem_site *s;
	uint64_t hash;
	uint32_t v, via;

	if (stack < h->p->nstacks && h->stack_site[stack] != UINT32_MAX)
		return h->stack_site[stack];
	if ((fr = site_frame(h->p, h->wrap, stack, &via))) {
		k.func = fr->func;
		k.line = fr->line;
		k.file = fr->file ? fr->file : "";
	}
	hash = util_hash_bytes(k.file, strlen(k.file), ((uint64_t)k.func << 32) | k.line);
	if ((v = util_map_find(&h->sitemap, hash, site_eq, probe)) != UINT32_MAX) {
		if (stack < h->p->nstacks)
			h->stack_site[stack] = v;
		return v;
	}
	if (util_grow((void **)&h->m->sites, &h->capsites, h->m->nsites, sizeof(*s)) < 0)
		return -ENOMEM;
	s = &h->m->sites[h->m->nsites];
	memset(s, 0, sizeof(*s));
	s->kind = MEM_SPACE_HOST;
	s->func = k.func;
	s->file = k.file;
	s->line = k.line;
	s->inlined = fr && fr->inlined;
	s->stack = PROF_NONE;
	s->via = via;
	if (util_map_put(&h->sitemap, hash, (uint32_t)h->m->nsites) < 0)
		return -ENOMEM;
	if (stack < h->p->nstacks)
		h->stack_site[stack] = (uint32_t)h->m->nsites;
	return (long)h->m->nsites++;
}
