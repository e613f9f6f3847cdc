/*
 * memory.c — the host side of the memory view (memory.h) and its entry point:
 * sampled allocations by site, peak, leaks and the live-bytes curve, then the
 * GPU side (mem_gpu.c) appended to the same result, then the memory rules.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "memory.h"
#include "span.h"
#include "util.h"

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

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
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
	mod = base_name(f->module ? f->module : "");
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
 * allocator; the innermost frame when every frame is the allocator's; NULL
 * for no stack. */
static const struct prof_frame *site_frame(const struct profile *p, uint32_t stack)
{
	const struct prof_stack *s;
	uint32_t i;

	if (stack >= p->nstacks || !p->stacks[stack].nframes)
		return NULL;
	s = &p->stacks[stack];
	if ((uint64_t)s->first + s->nframes > p->nframes)
		return NULL;
	for (i = 0; i < s->nframes; i++)
		if (!mem_frame_is_allocator(p, &p->frames[s->first + i]))
			return &p->frames[s->first + i];
	return &p->frames[s->first];
}

/* --- the result ------------------------------------------------------------ */

const char *mem_strdup(struct mem_analysis *m, const char *fmt, ...)
{
	char buf[256], **v, *s;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!(s = strdup(buf)))
		return NULL;
	if (!(v = util_reallocarray(m->strs, m->nstrs + 1, sizeof(*v)))) {
		free(s);
		return NULL;
	}
	m->strs = v;
	m->strs[m->nstrs++] = s;
	return s;
}

/* Each record of size s stands for 1 / (1 - exp(-s/rate)) allocations. */
static double alloc_weight(uint64_t size, uint64_t rate)
{
	double q;

	if (rate <= 1 || size == 0)
		return 1.0;
	q = -expm1(-(double)size / (double)rate);
	return q > 0 ? 1.0 / q : 1.0;
}

struct site_key {
	uint32_t func, line;
	const char *file;
};

struct host_ctx {
	const struct profile *p;
	struct mem_analysis *m;
	struct util_map sitemap;           /* site_key -> host site */
	uint32_t *asite;                   /* per mem_allocs record: its site */
	double *aw;                        /* per record: allocations it stands for */
	uint8_t *dead;                     /* per record: freed (or replaced) in a replay */
	uint32_t *stack_site;              /* per profile stack: its site, UINT32_MAX unknown
	                                    * (the allocator test runs once per stack) */
	size_t first_site;                 /* host sites begin here in m->sites */
	size_t capsites;                   /* m->sites' capacity while host sites are added */
	double *live;                      /* per site: live bytes during a replay */
	/* lifetimes of freed sampled blocks: (site, ns) */
	struct life { uint32_t site; uint64_t ns; } *lives;
	size_t nlives, caplives;
};

static int site_eq(const void *ctx, uint32_t v)
{
	const struct host_ctx *h = ((const void *const *)ctx)[0];
	const struct site_key *k = ((const void *const *)ctx)[1];
	const struct mem_site *s = &h->m->sites[v];

	return s->func == k->func && s->line == k->line && strcmp(s->file, k->file) == 0;
}

static long site_of(struct host_ctx *h, uint32_t stack)
{
	const struct prof_frame *fr;
	struct site_key k = { PROF_NONE, 0, "" };
	const void *probe[2] = { h, &k };
	struct mem_site *s;
	uint64_t hash;
	uint32_t v;

	if (stack < h->p->nstacks && h->stack_site[stack] != UINT32_MAX)
		return h->stack_site[stack];
	if ((fr = site_frame(h->p, stack))) {
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
	if (util_map_put(&h->sitemap, hash, (uint32_t)h->m->nsites) < 0)
		return -ENOMEM;
	if (stack < h->p->nstacks)
		h->stack_site[stack] = (uint32_t)h->m->nsites;
	return (long)h->m->nsites++;
}

/* [first, end) of a (process, ts)-sorted array for process proc. */
#define PROC_RANGE(arr, n, proc, first, end)                                         \
	do {                                                                         \
		size_t lo_ = 0, hi_ = (n);                                           \
		while (lo_ < hi_) {                                                  \
			size_t mid_ = lo_ + (hi_ - lo_) / 2;                         \
			if ((arr)[mid_].process < (proc)) lo_ = mid_ + 1;            \
			else hi_ = mid_;                                             \
		}                                                                    \
		(first) = lo_;                                                       \
		for ((end) = lo_; (end) < (n) && (arr)[(end)].process == (proc); (end)++) \
			;                                                            \
	} while (0)

/* The end of a sampled block: its free, or a later allocation at the same
 * address whose free was not seen (the agent's live table was full). */
struct death {
	uint64_t ts;
	uint32_t alloc;          /* index into mem_allocs */
	uint32_t freed;          /* 1: a free (a lifetime), 0: replaced */
};

struct pair_ev {
	uint64_t addr, ts;
	uint32_t idx, is_free;
};

static int pair_cmp(const void *a, const void *b)
{
	const struct pair_ev *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->is_free != y->is_free)
		return x->is_free ? 1 : -1;  /* an allocation before a free at the same time */
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int death_cmp(const void *a, const void *b)
{
	const struct death *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->alloc < y->alloc ? -1 : x->alloc > y->alloc;
}

struct replay {
	size_t a0, a1, f0, f1, c0, c1;     /* the process's records */
	struct death *deaths; size_t ndeaths;   /* by ts */
	uint64_t snap_ts;                  /* copy site lives here at this time, 0 never */
	double *snap;                      /* per site, when snap_ts */
	int stats;                         /* first pass: lifetimes, timeline, site maxima */
	/* out (stats pass) */
	double peak; uint64_t peak_ts;     /* highest estimated live */
	double live_end;
	struct mem_point *pts; size_t npts, cappts;
	size_t per, inpool;                /* points pooled into one (push_point) */
	uint8_t *dead;                     /* per mem_allocs record: it has a death */
};

/* Pair each free with the allocation it released: per address, in time
 * order, a free ends the latest allocation not yet ended; an allocation
 * ends the one before it when no free came between.  Frees that match
 * nothing (blocks sampled before a fork, lost records) are dropped. */
static int replay_pair(const struct profile *p, struct replay *r)
{
	size_t na = r->a1 - r->a0, nf = r->f1 - r->f0, n = 0, i;
	struct pair_ev *ev = calloc(na + nf + 1, sizeof(*ev));
	uint32_t pending = UINT32_MAX;
	uint64_t addr = 0;

	if (!ev || !(r->deaths = calloc(na + 1, sizeof(*r->deaths)))) {
		free(ev);
		return -ENOMEM;
	}
	for (i = r->a0; i < r->a1; i++)
		ev[n++] = (struct pair_ev){ p->mem_allocs[i].addr, p->mem_allocs[i].ts, (uint32_t)i, 0 };
	for (i = r->f0; i < r->f1; i++)
		ev[n++] = (struct pair_ev){ p->mem_frees[i].addr, p->mem_frees[i].ts, (uint32_t)i, 1 };
	qsort(ev, n, sizeof(*ev), pair_cmp);
	memset(r->dead + r->a0, 0, na);
	for (i = 0; i < n; i++) {
		if (i == 0 || ev[i].addr != addr) {
			addr = ev[i].addr;
			pending = UINT32_MAX;
		}
		if (pending != UINT32_MAX) {
			r->deaths[r->ndeaths++] = (struct death){ ev[i].ts, pending, ev[i].is_free };
			r->dead[pending] = 1;
			pending = UINT32_MAX;
		}
		if (!ev[i].is_free)
			pending = ev[i].idx;
	}
	free(ev);
	qsort(r->deaths, r->ndeaths, sizeof(*r->deaths), death_cmp);
	return 0;
}

/* Append a point to the curve; with r->per > 1, points are pooled r->per at
 * a time into the one with the highest live bytes (and the pool's highest
 * RSS), so a long run never holds more than about MEM_TIMELINE_MAX of them. */
static int push_point(struct replay *r, uint64_t ts, double live, uint64_t rss)
{
	struct mem_point *pt;
	int64_t l = (int64_t)(live + 0.5);

	if (r->inpool && r->npts) {
		pt = &r->pts[r->npts - 1];
		if (l > pt->live) {
			pt->ts = ts;
			pt->live = l;
		}
		if (rss > pt->rss)
			pt->rss = rss;
	} else {
		if (util_grow((void **)&r->pts, &r->cappts, r->npts, sizeof(*r->pts)) < 0)
			return -ENOMEM;
		pt = &r->pts[r->npts++];
		pt->ts = ts;
		pt->live = l;
		pt->rss = rss;
	}
	if (++r->inpool >= r->per)
		r->inpool = 0;
	return 0;
}

/* Births and deaths of one process's sampled blocks in time order (a birth
 * before a free at the same time, a replaced block's end before the birth
 * that replaced it), tracking each site's live bytes. */
static int replay_run(struct host_ctx *h, struct replay *r)
{
	const struct profile *p = h->p;
	size_t ai = r->a0, di = 0, ci = r->c0, s;
	double total = 0;
	uint64_t rss = 0;
	int ret, snapped = 0;

	for (s = h->first_site; s < h->m->nsites; s++)
		h->live[s] = 0;
	while (ai < r->a1 || di < r->ndeaths || (r->stats && ci < r->c1)) {
		uint64_t ta = ai < r->a1 ? p->mem_allocs[ai].ts : UINT64_MAX;
		uint64_t td = di < r->ndeaths ? r->deaths[di].ts : UINT64_MAX;
		uint64_t tc = r->stats && ci < r->c1 ? p->mem_counters[ci].ts : UINT64_MAX;
		/* a birth first on equal times, except after a block it replaces */
		int birth = ta < td || (ta == td && di < r->ndeaths && r->deaths[di].freed);
		uint64_t t = birth ? ta : td;

		if (tc < t) {
			rss = p->mem_counters[ci++].rss;
			if ((ret = push_point(r, tc, total, rss)) < 0)
				return ret;
			continue;
		}
		if (r->snap_ts && !snapped && t > r->snap_ts) {
			memcpy(r->snap, h->live, h->m->nsites * sizeof(*h->live));
			snapped = 1;
		}
		if (birth) {
			uint32_t si = h->asite[ai];
			double b = (double)p->mem_allocs[ai].size * h->aw[ai];

			h->live[si] += b;
			total += b;
			if (r->stats && h->live[si] > h->m->sites[si].max_live)
				h->m->sites[si].max_live = h->live[si];
			ai++;
		} else {
			const struct death *d = &r->deaths[di++];
			const struct prof_mem_alloc *a = &p->mem_allocs[d->alloc];
			uint32_t si = h->asite[d->alloc];

			h->live[si] -= (double)a->size * h->aw[d->alloc];
			total -= (double)a->size * h->aw[d->alloc];
			if (r->stats && d->freed) {
				uint64_t life = d->ts > a->ts ? d->ts - a->ts : 0;
				struct life *l;

				if (life < MEM_SHORT_NS)
					h->m->sites[si].short_lived += h->aw[d->alloc];
				if (util_grow((void **)&h->lives, &h->caplives, h->nlives,
					      sizeof(*h->lives)) < 0)
					return -ENOMEM;
				l = &h->lives[h->nlives++];
				l->site = si;
				l->ns = life;
			}
		}
		if (total < 0.5 && total > -0.5)
			total = 0;
		if (r->stats) {
			if (total > r->peak) {
				r->peak = total;
				r->peak_ts = t;
			}
			if ((ret = push_point(r, t, total, rss)) < 0)
				return ret;
		}
	}
	if (r->snap_ts && !snapped)
		memcpy(r->snap, h->live, h->m->nsites * sizeof(*h->live));
	r->live_end = total;
	return 0;
}

/* Keep at most MEM_TIMELINE_MAX points: in each bucket of consecutive points,
 * the one with the highest live bytes (and the bucket's highest RSS), so the
 * peak survives. */
static void timeline_reduce(struct mem_point *pts, size_t *n)
{
	size_t i, o = 0, per;

	if (*n <= MEM_TIMELINE_MAX)
		return;
	per = (*n + MEM_TIMELINE_MAX - 1) / MEM_TIMELINE_MAX;
	for (i = 0; i < *n; i += per) {
		size_t j, best = i, end = i + per < *n ? i + per : *n;
		uint64_t rss = 0;

		for (j = i; j < end; j++) {
			if (pts[j].live > pts[best].live)
				best = j;
			if (pts[j].rss > rss)
				rss = pts[j].rss;
		}
		pts[o] = pts[best];
		pts[o++].rss = rss;
	}
	*n = o;
}

/* The innermost range open at ts on any thread of process proc. */
static uint32_t range_at(const struct profile *p, uint32_t proc, uint64_t ts)
{
	uint32_t best = PROF_NONE;
	size_t i;

	for (i = 0; ts && i < p->nranges; i++) {
		const struct prof_range *g = &p->ranges[i];

		if (g->process != proc || g->kind == CBN_RANGE_MARK || g->kind == CBN_RANGE_STEP ||
		    g->start > ts || (g->end && g->end <= ts) || (!g->end && g->start != ts))
			continue;
		if (best == PROF_NONE || g->depth > p->ranges[best].depth ||
		    (g->depth == p->ranges[best].depth && g->start > p->ranges[best].start))
			best = (uint32_t)i;
	}
	return best;
}

/* The repeated steps of a process: intervals between cbn_step() markers when
 * there are at least three, else the instances of its most frequent
 * outermost range name (at least three).  *out malloc'ed, pairs of times. */
static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int range_name_cmp(const void *a, const void *b, void *ctx)
{
	const struct prof_range *g = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(g[x].name, g[y].name);

	return c ? c : (x < y ? -1 : x > y);
}

static long process_steps(const struct profile *p, uint32_t proc, uint64_t **out)
{
	size_t i, j, n = 0, best = 0, bestn = 0;
	uint64_t *v = NULL;
	uint32_t *cand;

	*out = NULL;
	for (i = 0; i < p->nranges; i++)
		n += p->ranges[i].process == proc && p->ranges[i].kind == CBN_RANGE_STEP;
	if (n >= 3) {
		uint64_t *t = calloc(n, sizeof(*t));
		size_t k = 0;

		if (!t || !(v = calloc(2 * n, sizeof(*v)))) {
			free(t);
			return -ENOMEM;
		}
		for (i = 0; i < p->nranges; i++)
			if (p->ranges[i].process == proc && p->ranges[i].kind == CBN_RANGE_STEP)
				t[k++] = p->ranges[i].start;
		qsort(t, n, sizeof(*t), u64_cmp);
		for (k = 0; k + 1 < n; k++) {
			v[2 * k] = t[k];
			v[2 * k + 1] = t[k + 1];
		}
		free(t);
		*out = v;
		return (long)(n - 1);
	}
	n = 0;
	/* the most frequent name among outermost push/pop or start/end ranges:
	 * candidates sorted by name, the longest run wins (the earliest on ties) */
	if (!(cand = calloc(p->nranges ? p->nranges : 1, sizeof(*cand))))
		return -ENOMEM;
	for (i = 0; i < p->nranges; i++) {
		const struct prof_range *g = &p->ranges[i];

		if (g->process == proc && g->depth == 0 && g->kind != CBN_RANGE_MARK &&
		    g->kind != CBN_RANGE_STEP && g->end && g->name)
			cand[n++] = (uint32_t)i;
	}
	qsort_r(cand, n, sizeof(*cand), range_name_cmp, (void *)p->ranges);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && strcmp(p->ranges[cand[j]].name, p->ranges[cand[i]].name) == 0;
		     j++)
			;
		if (j - i > bestn) {
			bestn = j - i;
			best = i;
		}
	}
	if (bestn < 3) {
		free(cand);
		return 0;
	}
	if (!(v = calloc(2 * bestn, sizeof(*v)))) {
		free(cand);
		return -ENOMEM;
	}
	for (j = 0; j < bestn; j++) {
		v[2 * j] = p->ranges[cand[best + j]].start;
		v[2 * j + 1] = p->ranges[cand[best + j]].end;
	}
	free(cand);
	/* in time order: a site's leaked blocks, in time order, meet them in turn */
	qsort(v, bestn, 2 * sizeof(*v), u64_cmp);
	*out = v;
	return (long)bestn;
}

static int life_cmp(const void *a, const void *b)
{
	const struct life *x = a, *y = b;

	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	return x->ns < y->ns ? -1 : x->ns > y->ns;
}

/* 1 when exactly one process recorded host memory: its sites are its own. */
static int single_host(const struct profile *p)
{
	size_t i, n = 0;

	for (i = 0; i < p->nprocesses; i++)
		n += p->processes[i].mem.state == CBN_MEM_ON;
	return n == 1;
}

static int peak_site_cmp(const void *a, const void *b)
{
	const struct mem_peak_site *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->site < y->site ? -1 : x->site > y->site;
}

/* One host space: replay process proc, fill space sp. */
static int host_space(struct host_ctx *h, uint32_t proc, struct mem_space *sp)
{
	const struct profile *p = h->p;
	const struct prof_process *pr = &p->processes[proc];
	const struct prof_mem_proc *pm = &pr->mem;
	struct replay r = { 0 };
	double *nl;
	uint64_t *steps = NULL;
	uint32_t *last_step = NULL;
	long nsteps;
	size_t i, k;
	int ret;

	PROC_RANGE(p->mem_allocs, p->nmem_allocs, proc, r.a0, r.a1);
	PROC_RANGE(p->mem_frees, p->nmem_frees, proc, r.f0, r.f1);
	PROC_RANGE(p->mem_counters, p->nmem_counters, proc, r.c0, r.c1);
	r.dead = h->dead;

	/* weights and sites of this process's records */
	for (i = r.a0; i < r.a1; i++) {
		const struct prof_mem_alloc *a = &p->mem_allocs[i];
		long s = site_of(h, a->stack);

		if (s < 0) {
			ret = -ENOMEM;
			goto out;
		}
		h->asite[i] = (uint32_t)s;
		h->aw[i] = alloc_weight(a->size, pm->rate);
		h->m->sites[s].bytes += (double)a->size * h->aw[i];
		h->m->sites[s].allocs += h->aw[i];
		h->m->sites[s].records++;
	}
	if (!(nl = util_reallocarray(h->live, h->m->nsites + 1, sizeof(*nl)))) {
		ret = -ENOMEM;
		goto out;
	}
	h->live = nl;

	sp->kind = MEM_SPACE_HOST;
	sp->process = proc;
	sp->device = 0;
	sp->peak_range = PROF_NONE;
	r.stats = 1;
	if ((ret = replay_pair(p, &r)) < 0)
		goto out;
	r.per = ((r.a1 - r.a0) + r.ndeaths + (r.c1 - r.c0)) / MEM_TIMELINE_MAX + 1;
	if ((ret = replay_run(h, &r)) < 0)
		goto out;

	/* leaks: blocks live at the end, and in which repeated steps they were born */
	if ((nsteps = process_steps(p, proc, &steps)) < 0 ||
	    !(last_step = calloc(h->m->nsites, sizeof(*last_step)))) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = r.a0; i < r.a1; i++) {
		const struct prof_mem_alloc *a = &p->mem_allocs[i];
		uint32_t si = h->asite[i];
		struct mem_site *s = &h->m->sites[si];
		uint64_t span = pr->end > pr->start ? pr->end - pr->start : 0;

		if (r.dead[i])
			continue;
		s->live_end_bytes += (double)a->size * h->aw[i];
		s->live_end_blocks += h->aw[i];
		if (!s->leak_first_ts || a->ts < s->leak_first_ts)
			s->leak_first_ts = a->ts;
		if (a->ts > s->leak_last_ts)
			s->leak_last_ts = a->ts;
		if (span > s->leak_span_ns)
			s->leak_span_ns = span;
		if (nsteps > 0 && (uint32_t)nsteps > s->steps)
			s->steps = (uint32_t)nsteps;
		/* records are in time order: a site's steps come in increasing order */
		for (k = 0; k < (size_t)nsteps; k++)
			if (a->ts >= steps[2 * k] && a->ts < steps[2 * k + 1])
				break;
		if (k < (size_t)nsteps && last_step[si] != k + 1) {
			last_step[si] = (uint32_t)(k + 1);
			s->leak_steps++;
		}
	}

	/* the peak */
	sp->rss_peak = pm->rss_peak;
	sp->address_peak = pm->reserved_peak;
	for (i = r.c0; i < r.c1; i++)
		if (p->mem_counters[i].rss > sp->rss_peak)
			sp->rss_peak = p->mem_counters[i].rss;
	if ((pm->flags & CBN_MEMF_USABLE) && (pm->host_peak || r.c1 > r.c0)) {
		/* exact counters: the header's peak, the curve from MEM_COUNTERS */
		int placed = 0;

		r.npts = 0;
		r.per = 1;
		r.inpool = 0;
		/* With capture windows the peak is the windows' (span.h): the
		 * counters read inside them; the header's covers the whole run. */
		sp->windowed = proc < p->nprocesses &&
			       p->processes[proc].capture.mode == CBN_CAPTURE_CONTROLLED;
		sp->peak = sp->windowed ? 0 : pm->host_peak;
		sp->peak_ts = sp->windowed ? 0 : pm->host_peak_ts;
		for (i = r.c0; i < r.c1; i++) {
			const struct prof_mem_counter *c = &p->mem_counters[i];

			if (sp->windowed && !span_in_process(p, proc, c->ts, c->ts + 1))
				continue;
			if (c->host_live > 0 && (uint64_t)c->host_live > sp->peak) {
				sp->peak = (uint64_t)c->host_live;
				sp->peak_ts = c->ts;
			}
		}
		for (i = r.c0; i < r.c1; i++) {
			const struct prof_mem_counter *c = &p->mem_counters[i];

			if (!placed && sp->peak_ts && sp->peak_ts < c->ts) {
				placed = 1;
				if ((ret = push_point(&r, sp->peak_ts, (double)sp->peak, c->rss)) < 0)
					goto out;
			}
			placed |= c->ts == sp->peak_ts;
			if ((ret = push_point(&r, c->ts, (double)c->host_live, c->rss)) < 0)
				goto out;
		}
		if (!placed && sp->peak_ts &&
		    (ret = push_point(&r, sp->peak_ts, (double)sp->peak, 0)) < 0)
			goto out;
		sp->peak_exact = 1;
		sp->live_end = pm->host_live_end;
		if (!sp->live_end && r.c1 > r.c0)
			sp->live_end = p->mem_counters[r.c1 - 1].host_live;
	} else {
		/* the replayed estimate (every block, in exact mode) */
		sp->peak = (uint64_t)(r.peak + 0.5);
		sp->peak_ts = r.peak_ts;
		sp->peak_exact = pm->rate <= 1 && !pm->lost && !pm->untracked;
		sp->live_end = (int64_t)(r.live_end + 0.5);
	}
	timeline_reduce(r.pts, &r.npts);
	sp->timeline = r.pts;
	sp->ntimeline = r.npts;
	r.pts = NULL;
	sp->peak_range = range_at(p, proc, sp->peak_ts);

	/* sites live at the peak: a second replay up to it */
	if (sp->peak_ts && r.a1 > r.a0) {
		size_t n = 0;

		r.stats = 0;
		r.snap_ts = sp->peak_ts;
		if (!(r.snap = calloc(h->m->nsites, sizeof(*r.snap))) ||
		    !(sp->at_peak = calloc(h->m->nsites - h->first_site, sizeof(*sp->at_peak)))) {
			ret = -ENOMEM;
			goto out;
		}
		if ((ret = replay_run(h, &r)) < 0)
			goto out;
		double sum = 0, f = 1;

		for (i = h->first_site; i < h->m->nsites; i++)
			sum += r.snap[i] > 0 ? r.snap[i] : 0;
		/* Sampled shares of an exact peak: when their sum overshoots it
		 * (a Poisson count above its mean), scale them down to it, so no
		 * site is shown holding more than the whole.  An undershoot is left
		 * alone: blocks from before recording started have no record, and
		 * their bytes must not be handed to the sites that do. */
		if (sp->peak_exact && single_host(p) && sum > (double)sp->peak && sum > 0)
			f = (double)sp->peak / sum;
		for (i = h->first_site; i < h->m->nsites; i++)
			if (r.snap[i] * f >= 0.5)
				sp->at_peak[n++] = (struct mem_peak_site){ (uint32_t)i, r.snap[i] * f };
		qsort(sp->at_peak, n, sizeof(*sp->at_peak), peak_site_cmp);
		sp->nat_peak = n < MEM_PEAK_SITES_MAX ? n : MEM_PEAK_SITES_MAX;
		if (!sp->nat_peak) {
			free(sp->at_peak);
			sp->at_peak = NULL;
		}
	}

	/* No site's own peak above the whole's, and the same scaling for what
	 * was live at the end, against the exact counter.  Only with one host
	 * process: sites are shared by processes, and their figures summed. */
	if (sp->peak_exact && single_host(p))
		for (i = h->first_site; i < h->m->nsites; i++)
			if (h->m->sites[i].max_live > (double)sp->peak)
				h->m->sites[i].max_live = (double)sp->peak;
	if (sp->peak_exact && single_host(p) && sp->live_end >= 0) {
		double sum = 0, f;

		for (i = h->first_site; i < h->m->nsites; i++)
			sum += h->m->sites[i].live_end_bytes;
		if (sum > (double)sp->live_end && sum > 0) {
			f = (double)sp->live_end / sum;
			for (i = h->first_site; i < h->m->nsites; i++) {
				h->m->sites[i].live_end_bytes *= f;
				h->m->sites[i].live_end_blocks *= f;
			}
		}
	}

	sp->allocs = pm->allocs;
	sp->frees = pm->frees;
	sp->alloc_bytes = pm->alloc_bytes;
	if (!sp->allocs && r.c1 > r.c0) {
		sp->allocs = p->mem_counters[r.c1 - 1].allocs;
		sp->frees = p->mem_counters[r.c1 - 1].frees;
		sp->alloc_bytes = p->mem_counters[r.c1 - 1].alloc_bytes;
	}
	ret = 0;
out:
	free(r.pts);
	free(r.snap);
	free(r.deaths);
	free(steps);
	free(last_step);
	return ret;
}

struct stack_acc {
	uint64_t key;                      /* site << 32 | stack */
	double bytes;
};

static int acc_eq(const void *ctx, uint32_t v)
{
	const struct stack_acc *acc = ((const void *const *)ctx)[0];
	const uint64_t *key = ((const void *const *)ctx)[1];

	return acc[v].key == *key;
}

/* Each host site's stack with the most bytes allocated. */
static int heaviest_stacks(struct host_ctx *h)
{
	const struct profile *p = h->p;
	struct util_map map = { 0 };
	struct stack_acc *acc = NULL;
	size_t nacc = 0, cap = 0, i;
	double *best = calloc(h->m->nsites + 1, sizeof(*best));
	int ret = 0;

	if (!best)
		return -ENOMEM;
	for (i = 0; i < p->nmem_allocs; i++) {
		const struct prof_mem_alloc *a = &p->mem_allocs[i];
		uint64_t key;
		const void *probe[2];
		uint32_t v, s;

		if (a->process >= p->nprocesses || p->processes[a->process].mem.state != CBN_MEM_ON ||
		    a->stack == PROF_NONE)
			continue;
		s = h->asite[i];
		key = ((uint64_t)s << 32) | a->stack;
		probe[0] = acc;
		probe[1] = &key;
		if ((v = util_map_find(&map, util_mix64(key), acc_eq, probe)) == UINT32_MAX) {
			if (util_grow((void **)&acc, &cap, nacc, sizeof(*acc)) < 0 ||
			    util_map_put(&map, util_mix64(key), (uint32_t)nacc) < 0) {
				ret = -ENOMEM;
				break;
			}
			acc[nacc] = (struct stack_acc){ key, 0 };
			v = (uint32_t)nacc++;
		}
		acc[v].bytes += (double)a->size * h->aw[i];
		if (acc[v].bytes > best[s]) {
			best[s] = acc[v].bytes;
			h->m->sites[s].stack = a->stack;
		}
	}
	util_map_free(&map);
	free(acc);
	free(best);
	return ret;
}

/* Host spaces, one per process that recorded host memory. */
static int host_analyze(const struct profile *p, struct mem_analysis *m)
{
	struct host_ctx h = { .p = p, .m = m };
	size_t i, nhost = 0;
	int ret = 0;

	for (i = 0; i < p->nprocesses; i++) {
		const struct prof_mem_proc *pm = &p->processes[i].mem;

		if (pm->state == CBN_MEM_REFUSED && !m->refused)
			m->refused = pm->reason && *pm->reason ? pm->reason : "refused by the agent";
		if (pm->state != CBN_MEM_ON)
			continue;
		if (!nhost++) {
			m->rate = pm->rate ? pm->rate : 1;
			m->exact = 1;
		}
		m->exact &= pm->rate <= 1;
		m->sampled += pm->sampled;
		m->lost += pm->lost;
		m->untracked += pm->untracked;
		m->no_stack += pm->no_stack;
	}
	if (!nhost)
		return 0;
	h.first_site = m->nsites;
	h.capsites = m->nsites;
	if (!(h.asite = calloc(p->nmem_allocs ? p->nmem_allocs : 1, sizeof(*h.asite))) ||
	    !(h.aw = calloc(p->nmem_allocs ? p->nmem_allocs : 1, sizeof(*h.aw))) ||
	    !(h.dead = calloc(p->nmem_allocs ? p->nmem_allocs : 1, 1)) ||
	    !(h.stack_site = util_reallocarray(NULL, p->nstacks ? p->nstacks : 1,
					       sizeof(*h.stack_site))) ||
	    !(h.live = calloc(1, sizeof(*h.live)))) {
		ret = -ENOMEM;
		goto out;
	}
	memset(h.stack_site, 0xff, (p->nstacks ? p->nstacks : 1) * sizeof(*h.stack_site));
	for (i = 0; i < p->nprocesses; i++) {
		const struct prof_process *pr = &p->processes[i];
		struct mem_space *sp;

		if (pr->mem.state != CBN_MEM_ON)
			continue;
		if (!(sp = util_reallocarray(m->spaces, m->nspaces + 1, sizeof(*sp)))) {
			ret = -ENOMEM;
			goto out;
		}
		m->spaces = sp;
		sp = &m->spaces[m->nspaces++];
		memset(sp, 0, sizeof(*sp));
		sp->name = nhost > 1 ? mem_strdup(m, "host pid %u", pr->pid) : "host";
		if (!sp->name) {
			ret = -ENOMEM;
			goto out;
		}
		if ((ret = host_space(&h, (uint32_t)i, sp)) < 0)
			goto out;
	}

	/* lifetimes: each site's median */
	if (h.nlives) /* qsort's base must not be NULL, even for 0 elements */
		qsort(h.lives, h.nlives, sizeof(*h.lives), life_cmp);
	for (i = 0; i < h.nlives;) {
		size_t j = i;

		while (j < h.nlives && h.lives[j].site == h.lives[i].site)
			j++;
		m->sites[h.lives[i].site].median_life_ns = h.lives[i + (j - i) / 2].ns;
		i = j;
	}
	/* each site's heaviest stack */
	if ((ret = heaviest_stacks(&h)) < 0)
		goto out;
out:
	util_map_free(&h.sitemap);
	free(h.asite);
	free(h.aw);
	free(h.dead);
	free(h.stack_site);
	free(h.live);
	free(h.lives);
	return ret;
}

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
static int sites_finish(struct mem_analysis *m)
{
	uint32_t *order, *rank;
	struct mem_site *sorted;
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
	m->nleaks = 0;
	for (i = 0; i < m->nsites; i++)
		if (m->sites[i].live_end_bytes >= 0.5)
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

/* --- entry point ----------------------------------------------------------- */

int mem_analyze(struct analysis *a)
{
	const struct profile *p = a->profile;
	struct mem_analysis *m;
	int ret;

	a->memory = NULL;
	if (!(m = calloc(1, sizeof(*m))))
		return -ENOMEM;
	if ((ret = host_analyze(p, m)) < 0 || (ret = mem_gpu_analyze(p, m)) < 0 ||
	    (ret = sites_finish(m)) < 0)
		goto fail;
	if (!m->nspaces && !m->refused) {
		mem_free(m);
		return 0;
	}
	if ((ret = mem_rules_build(m, p)) < 0)
		goto fail;
	a->memory = m;
	return 0;
fail:
	mem_free(m);
	return ret;
}

void mem_free(struct mem_analysis *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nspaces; i++) {
		free(m->spaces[i].timeline);
		free(m->spaces[i].at_peak);
	}
	for (i = 0; i < m->nstrs; i++)
		free(m->strs[i]);
	free(m->spaces);
	free(m->sites);
	free(m->leaks);
	rules_findings_free(m->recos, m->nrecos);
	free(m->strs);
	free(m);
}
