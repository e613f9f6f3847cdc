/*
 * mem_gpu.c — the GPU side of the memory view (memory.h): per device, live
 * bytes over time from CUPTI MEMORY2 records, reserved bytes from memory
 * pools, the peak, allocation sites from the API call's host stack, and
 * allocations not freed before the end.  Pinned host memory (cudaMallocHost,
 * cudaHostAlloc: MEMORY2 kind PINNED or PAGEABLE) is a space of its own,
 * "pinned host" (device MEM_DEVICE_PINNED), so it never counts against a
 * device's memory.
 *
 * Every record is an exact event, so the figures are exact: one sweep per
 * space in timestamp order over allocations, releases and pool size changes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_int.h"
#include "memory.h"

/* One event of a space's sweep: a MEMORY2 record or a MEMORY_POOL record. */
struct gev {
	uint64_t ts;
	uint32_t idx;            /* into p->memory, or p->mempools when pool */
	uint32_t pool;           /* 1: a MEMORY_POOL record */
	uint32_t space;          /* index into the spaces being built */
};

/* A live block (open addressing on (process, address)). */
struct gblk {
	uint64_t addr, bytes, ts;
	uint32_t process, site, used;
	uint32_t pooled;         /* served from a pool: not in the non-pool reserve */
};

struct gmap {
	struct gblk *b;
	size_t cap, n;
};

/* A pool's current size, by (process, address): few pools, linear list. */
struct gpool {
	uint64_t addr, size;
	uint32_t process, space;
};

/* Per-site sweep state. */
struct gsite_acc {
	double live;
	uint64_t *life; size_t nlife, caplife;
};

/* (site, stack) bytes, to pick each site's heaviest stack. */
struct gstack {
	uint32_t site, stack;
	uint64_t bytes;
};

static const char *const gpu_names[] = {
	"GPU 0", "GPU 1", "GPU 2", "GPU 3", "GPU 4", "GPU 5", "GPU 6", "GPU 7",
	"GPU 8", "GPU 9", "GPU 10", "GPU 11", "GPU 12", "GPU 13", "GPU 14", "GPU 15",
};

static int is_host_kind(uint32_t kind)
{
	return kind == CBN_MEM_PINNED || kind == CBN_MEM_PAGEABLE;
}

static uint32_t space_device(const struct prof_cuda_memory *r)
{
	return is_host_kind(r->mem_kind) ? MEM_DEVICE_PINNED : r->device;
}

static uint64_t gmap_hash(uint32_t process, uint64_t addr)
{
	return util_mix64(addr ^ ((uint64_t)process << 48));
}

static int gmap_grow(struct gmap *m)
{
	struct gmap n = { 0 };
	size_t i, j;

	n.cap = m->cap ? m->cap * 2 : 256;
	if (!(n.b = calloc(n.cap, sizeof(*n.b))))
		return -ENOMEM;
	for (i = 0; i < m->cap; i++) {
		if (!m->b[i].used)
			continue;
		j = gmap_hash(m->b[i].process, m->b[i].addr) & (n.cap - 1);
		while (n.b[j].used)
			j = (j + 1) & (n.cap - 1);
		n.b[j] = m->b[i];
		n.n++;
	}
	free(m->b);
	*m = n;
	return 0;
}

static struct gblk *gmap_find(struct gmap *m, uint32_t process, uint64_t addr)
{
	size_t j;

	if (!m->cap)
		return NULL;
	j = gmap_hash(process, addr) & (m->cap - 1);
	while (m->b[j].used) {
		if (m->b[j].addr == addr && m->b[j].process == process)
			return &m->b[j];
		j = (j + 1) & (m->cap - 1);
	}
	return NULL;
}

/* Delete slot e (backward-shift, so probe chains stay intact). */
static void gmap_del(struct gmap *m, struct gblk *e)
{
	size_t i = (size_t)(e - m->b), j = i, k;

	m->b[i].used = 0;
	m->n--;
	for (;;) {
		j = (j + 1) & (m->cap - 1);
		if (!m->b[j].used)
			return;
		k = gmap_hash(m->b[j].process, m->b[j].addr) & (m->cap - 1);
		/* move j to i when its home k is not cyclically in (i, j] */
		if ((i <= j) ? (k <= i || k > j) : (k <= i && k > j)) {
			m->b[i] = m->b[j];
			m->b[j].used = 0;
			i = j;
		}
	}
}

/* Insert (replacing a block at the same address, whose release was lost). */
static struct gblk *gmap_put(struct gmap *m, uint32_t process, uint64_t addr)
{
	struct gblk *e = gmap_find(m, process, addr);
	size_t j;

	if (e)
		return e;
	if ((m->n + 1) * 2 > m->cap && gmap_grow(m) < 0)
		return NULL;
	j = gmap_hash(process, addr) & (m->cap - 1);
	while (m->b[j].used)
		j = (j + 1) & (m->cap - 1);
	memset(&m->b[j], 0, sizeof(m->b[j]));
	m->b[j].used = 1;
	m->b[j].process = process;
	m->b[j].addr = addr;
	m->n++;
	return &m->b[j];
}

static int cmp_gev(const void *a, const void *b)
{
	const struct gev *x = a, *y = b;

	if (x->space != y->space)
		return x->space < y->space ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	/* at one instant: pool changes first, then records in file order */
	if (x->pool != y->pool)
		return x->pool ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Innermost span range of process proc open at ts (deepest, then latest). */
static uint32_t range_at(const struct profile *p, uint32_t proc, uint64_t ts)
{
	uint32_t best = PROF_NONE;
	size_t i;

	for (i = 0; i < p->nranges; i++) {
		const struct prof_range *r = &p->ranges[i];

		if (r->process != proc || !range_is_span(r) || ts < r->start || ts > r->end)
			continue;
		if (best == PROF_NONE || r->depth > p->ranges[best].depth ||
		    (r->depth == p->ranges[best].depth && r->start > p->ranges[best].start))
			best = (uint32_t)i;
	}
	return best;
}

static uint64_t device_total(const struct profile *p, uint32_t device)
{
	size_t i;

	if (device == MEM_DEVICE_PINNED)
		return 0;
	for (i = 0; i < p->ndevices; i++)
		if (p->devices[i].id == device && p->devices[i].global_mem)
			return p->devices[i].global_mem;
	return 0;
}

/* --- sites ---------------------------------------------------------------- */

struct gsites {
	struct mem_site *s; size_t n, cap;
	struct util_map map;     /* hash of (device, func, file, line) -> index into s */
};

struct gsite_probe {
	const struct gsites *gs;
	uint32_t dev, func, line;
	const char *file;
};

static int gsite_eq(const void *ctx, uint32_t v)
{
	const struct gsite_probe *q = ctx;
	const struct mem_site *s = &q->gs->s[v];

	return s->device == q->dev && s->func == q->func && s->line == q->line &&
	       strcmp(s->file, q->file) == 0;
}

/* 1 when a frame of stack st belongs to a caching allocator of device
 * memory, which keeps freed blocks for reuse until the process ends. */
static int caching_stack(const struct profile *p, uint32_t st)
{
	static const char *const names[] = {
		"CUDACachingAllocator", "CachingAllocator", "CachingDeviceAllocator",
		"cuda_malloc_async", "rmm::mr::", "MemoryPool::malloc", NULL,
	};
	const struct prof_stack *k;
	uint32_t i;
	size_t j;

	if (st >= p->nstacks)
		return 0;
	k = &p->stacks[st];
	for (i = 0; i < k->nframes && (size_t)k->first + i < p->nframes; i++) {
		uint32_t f = p->frames[k->first + i].func;
		const char *n = f < p->nfuncs ? p->funcs[f].name : NULL;

		for (j = 0; n && names[j]; j++)
			if (strstr(n, names[j]))
				return 1;
	}
	return 0;
}

/* The site of allocation record r (index into gs->s), or -ENOMEM. */
static long site_of(struct gsites *gs, const struct profile *p, const struct prof_cuda_memory *r)
{
	const struct prof_cuda_api *a = r->api < p->ncuda_api ? &p->cuda_api[r->api] : NULL;
	uint32_t stack = a ? a->stack : PROF_NONE, f = CUDA_NO_IDX, v;
	struct gsite_probe q = { gs, space_device(r), PROF_NONE, 0, "" };
	int inlined = 0;
	uint64_t h;

	if (stack != PROF_NONE && stack < p->nstacks)
		f = cuda_site_frame(p, stack, NULL);
	if (f != CUDA_NO_IDX && f < p->nframes) {
		const struct prof_frame *fr = &p->frames[f];

		q.func = fr->func < p->nfuncs ? fr->func : PROF_NONE;
		q.file = fr->file ? fr->file : "";
		q.line = fr->line;
		inlined = fr->inlined != 0;
	}
	h = util_mix64(((uint64_t)q.dev << 32 | q.func) ^ util_mix64(q.line) ^
		       util_fnv1a_str(q.file, UTIL_FNV_INIT));
	v = util_map_find(&gs->map, h, gsite_eq, &q);
	if (v != UINT32_MAX)
		return v;
	if (gs->n == gs->cap) {
		size_t cap = gs->cap ? gs->cap * 2 : 16;
		struct mem_site *n = realloc(gs->s, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		gs->s = n;
		gs->cap = cap;
	}
	if (util_map_put(&gs->map, h, (uint32_t)gs->n))
		return -ENOMEM;
	memset(&gs->s[gs->n], 0, sizeof(gs->s[gs->n]));
	gs->s[gs->n].kind = MEM_SPACE_GPU;
	gs->s[gs->n].device = q.dev;
	gs->s[gs->n].func = q.func;
	gs->s[gs->n].file = q.file;
	gs->s[gs->n].line = q.line;
	gs->s[gs->n].inlined = inlined;
	gs->s[gs->n].stack = PROF_NONE;
	gs->s[gs->n].via = PROF_NONE;
	gs->s[gs->n].max_live_known = 1; /* every GPU record: exact */
	return (long)gs->n++;
}

/* --- the sweep ------------------------------------------------------------ */

struct gspace_acc {
	uint64_t live, reserved_np;   /* live bytes; of which not from a pool */
	uint64_t pool_sum;            /* sum of this space's pool sizes */
	size_t peak_ev;               /* event index of the peak (first reached) */
	struct mem_point *pts; size_t npts;
};

/* Max-preserving downsampling: consecutive points in MEM_TIMELINE_MAX buckets,
 * each kept as its highest-live point (with the bucket's highest reserved). */
static void downsample(struct mem_point *pts, size_t *n)
{
	size_t i, b, nb = MEM_TIMELINE_MAX, out = 0;

	if (*n <= MEM_TIMELINE_MAX)
		return;
	for (b = 0; b < nb; b++) {
		size_t lo = *n * b / nb, hi = *n * (b + 1) / nb, best = lo;
		uint64_t rmax = 0;

		for (i = lo; i < hi; i++) {
			if (pts[i].live > pts[best].live)
				best = i;
			if (pts[i].rss > rmax)
				rmax = pts[i].rss;
		}
		if (hi > lo) {
			pts[out] = pts[best];
			pts[out].rss = rmax;
			out++;
		}
	}
	*n = out;
}

static int pool_set(struct gpool **pools, size_t *npools, size_t *cap, uint32_t process,
		    uint32_t space, uint64_t addr, uint64_t size, uint64_t *sum)
{
	size_t i;

	for (i = 0; i < *npools; i++) {
		if ((*pools)[i].addr == addr && (*pools)[i].process == process &&
		    (*pools)[i].space == space) {
			*sum = *sum - (*pools)[i].size + size;
			(*pools)[i].size = size;
			return 0;
		}
	}
	if (*npools == *cap) {
		size_t c = *cap ? *cap * 2 : 8;
		struct gpool *n = realloc(*pools, c * sizeof(*n));

		if (!n)
			return -ENOMEM;
		*pools = n;
		*cap = c;
	}
	(*pools)[(*npools)++] = (struct gpool){ addr, size, process, space };
	*sum += size;
	return 0;
}

static int cmp_gstack(const void *a, const void *b)
{
	const struct gstack *x = a, *y = b;

	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static const struct mem_site *gsort_sites; /* qsort has no context argument */

static int cmp_site_bytes(const void *a, const void *b)
{
	const struct mem_site *x = &gsort_sites[*(const uint32_t *)a];
	const struct mem_site *y = &gsort_sites[*(const uint32_t *)b];

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return cmp_u32(a, b);
}

static int cmp_site_leak(const void *a, const void *b)
{
	const struct mem_site *x = &gsort_sites[*(const uint32_t *)a];
	const struct mem_site *y = &gsort_sites[*(const uint32_t *)b];

	if (x->live_end_bytes != y->live_end_bytes)
		return x->live_end_bytes > y->live_end_bytes ? -1 : 1;
	return cmp_u32(a, b);
}

static int cmp_peak_site(const void *a, const void *b)
{
	const struct mem_peak_site *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->site < y->site ? -1 : x->site > y->site;
}

/* One analysis of the GPU spaces: the events of every space in time order,
 * the sweep's state, and the sites being built (indices into gs.s until they
 * are appended to m->sites). */
struct gpu_ctx {
	const struct profile *p;
	struct mem_analysis *m;
	uint32_t devs[64 + 1];        /* the spaces: device ids, MEM_DEVICE_PINNED last */
	size_t ndevs;
	size_t base_space, base_site; /* this side's first space and site in m */
	struct gev *ev; size_t nev;
	struct gspace_acc *acc;       /* per space */
	struct gsites gs;
	struct gsite_acc *sacc; size_t nsacc;   /* per site */
	struct gpool *pools; size_t npools, cappools;
	struct gmap live;
};

/* The spaces (devices by id, up to 64, then pinned host) and their events
 * in time order; each space's curve sized for one point per event. */
static int gpu_events(struct gpu_ctx *G)
{
	const struct profile *p = G->p;
	size_t i, j, s;

	for (i = 0; i < p->nmemory; i++) {
		uint32_t d = space_device(&p->memory[i]);

		for (j = 0; j < G->ndevs && G->devs[j] != d; j++)
			;
		if (j == G->ndevs && G->ndevs < sizeof(G->devs) / sizeof(G->devs[0]))
			G->devs[G->ndevs++] = d;
	}
	qsort(G->devs, G->ndevs, sizeof(G->devs[0]), cmp_u32); /* MEM_DEVICE_PINNED sorts last */

	if (!(G->ev = calloc(p->nmemory + p->nmempools, sizeof(*G->ev))) ||
	    !(G->acc = calloc(G->ndevs, sizeof(*G->acc))))
		return -ENOMEM;
	for (i = 0; i < p->nmemory; i++) {
		uint32_t d = space_device(&p->memory[i]);

		for (j = 0; j < G->ndevs && G->devs[j] != d; j++)
			;
		if (j == G->ndevs)
			continue;
		G->ev[G->nev++] = (struct gev){ p->memory[i].ts, (uint32_t)i, 0, (uint32_t)j };
	}
	for (i = 0; i < p->nmempools; i++) {
		for (j = 0; j < G->ndevs && G->devs[j] != p->mempools[i].device; j++)
			;
		if (j == G->ndevs)
			continue;
		G->ev[G->nev++] = (struct gev){ p->mempools[i].ts, (uint32_t)i, 1, (uint32_t)j };
	}
	qsort(G->ev, G->nev, sizeof(*G->ev), cmp_gev);
	/* one curve point per event: each space's array sized once */
	for (i = 0; i < G->nev; i++)
		G->acc[G->ev[i].space].npts++;
	for (s = 0; s < G->ndevs; s++) {
		if (!(G->acc[s].pts = calloc(G->acc[s].npts + 1, sizeof(*G->acc[s].pts))))
			return -ENOMEM;
		G->acc[s].npts = 0;
	}
	return 0;
}

/* Sweep: allocation record r of space A. */
static int sweep_alloc(struct gpu_ctx *G, struct gspace_acc *A, const struct prof_cuda_memory *r)
{
	struct gsites *gs = &G->gs;
	struct gblk *b;
	long site;
	size_t j;

	if ((site = site_of(gs, G->p, r)) < 0)
		return -ENOMEM;
	if ((size_t)site >= G->nsacc || !G->sacc) {
		struct gsite_acc *n = realloc(G->sacc, gs->cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (j = G->nsacc; j < gs->cap; j++)
			memset(&n[j], 0, sizeof(n[j]));
		G->sacc = n;
		G->nsacc = gs->cap;
	}
	if ((b = gmap_find(&G->live, r->process, r->address))) {
		/* a block allocated twice: its release was not seen */
		A->live -= b->bytes;
		if (!b->pooled && A->reserved_np >= b->bytes)
			A->reserved_np -= b->bytes;
		G->sacc[b->site].live -= (double)b->bytes;
		gmap_del(&G->live, b);
	}
	if (!(b = gmap_put(&G->live, r->process, r->address)))
		return -ENOMEM;
	b->bytes = r->bytes;
	b->ts = r->ts;
	b->site = (uint32_t)site;
	b->pooled = r->pool_address != 0;
	A->live += r->bytes;
	if (!r->pool_address)
		A->reserved_np += r->bytes;
	gs->s[site].bytes += (double)r->bytes;
	gs->s[site].allocs += 1;
	gs->s[site].records++;
	G->sacc[site].live += (double)r->bytes;
	if (G->sacc[site].live > gs->s[site].max_live)
		gs->s[site].max_live = G->sacc[site].live;
	return 0;
}

/* Sweep: release record r of space A (one of a block not seen allocated
 * is passed over). */
static int sweep_free(struct gpu_ctx *G, struct gspace_acc *A, const struct prof_cuda_memory *r)
{
	struct gblk *b = gmap_find(&G->live, r->process, r->address);
	struct gsite_acc *sa;
	uint64_t life;

	if (!b)
		return 0;
	sa = &G->sacc[b->site];
	life = r->ts >= b->ts ? r->ts - b->ts : 0;
	A->live -= b->bytes;
	if (!b->pooled && A->reserved_np >= b->bytes)
		A->reserved_np -= b->bytes;
	sa->live -= (double)b->bytes;
	if (life < MEM_SHORT_NS)
		G->gs.s[b->site].short_lived += 1;
	if (sa->nlife == sa->caplife) {
		size_t c = sa->caplife ? sa->caplife * 2 : 8;
		uint64_t *n = realloc(sa->life, c * sizeof(*n));

		if (!n)
			return -ENOMEM;
		sa->life = n;
		sa->caplife = c;
	}
	sa->life[sa->nlife++] = life;
	gmap_del(&G->live, b);
	return 0;
}

/* Pass 1 over the events: each space's curve and peak, the sites' figures. */
static int gpu_sweep(struct gpu_ctx *G)
{
	const struct profile *p = G->p;
	size_t i;

	for (i = 0; i < G->nev; i++) {
		struct gspace_acc *A = &G->acc[G->ev[i].space];
		struct mem_point *pt;

		if (G->ev[i].pool) {
			const struct prof_cuda_mempool *q = &p->mempools[G->ev[i].idx];

			if (pool_set(&G->pools, &G->npools, &G->cappools, q->process,
				     G->ev[i].space, q->address,
				     q->op == CBN_MEMPOOL_DESTROYED ? 0 : q->size, &A->pool_sum) < 0)
				return -ENOMEM;
		} else {
			const struct prof_cuda_memory *r = &p->memory[G->ev[i].idx];

			if (r->pool_address && r->pool_size &&
			    pool_set(&G->pools, &G->npools, &G->cappools, r->process, G->ev[i].space,
				     r->pool_address, r->pool_size, &A->pool_sum) < 0)
				return -ENOMEM;
			if (r->alloc ? sweep_alloc(G, A, r) < 0 : sweep_free(G, A, r) < 0)
				return -ENOMEM;
		}
		pt = &A->pts[A->npts++];
		pt->ts = G->ev[i].ts;
		pt->live = (int64_t)A->live;
		pt->rss = A->reserved_np + A->pool_sum;
		if (A->npts == 1 || (uint64_t)pt->live > (uint64_t)A->pts[A->peak_ev].live)
			A->peak_ev = A->npts - 1;
	}
	return 0;
}

/* The spaces, appended to m: name, capacity, peaks, end, counts. */
static int gpu_spaces(struct gpu_ctx *G)
{
	const struct profile *p = G->p;
	struct mem_analysis *m = G->m;
	struct mem_space *ns = realloc(m->spaces, (m->nspaces + G->ndevs) * sizeof(*ns));
	size_t i, s;

	if (!ns)
		return -ENOMEM;
	m->spaces = ns;
	for (s = 0; s < G->ndevs; s++) {
		struct mem_space *sp = &m->spaces[G->base_space + s];
		struct gspace_acc *A = &G->acc[s];
		uint32_t dev = G->devs[s];
		size_t k;

		memset(sp, 0, sizeof(*sp));
		sp->kind = MEM_SPACE_GPU;
		sp->process = PROF_NONE;
		sp->device = dev;
		sp->name = dev == MEM_DEVICE_PINNED ? "pinned host"
			   : dev < sizeof(gpu_names) / sizeof(gpu_names[0]) ? gpu_names[dev]
									     : "GPU";
		sp->peak_exact = 1;
		sp->peak_range = PROF_NONE;
		sp->total = device_total(p, dev);
		for (k = 0; k < A->npts; k++)
			if (A->pts[k].rss > sp->reserved_peak)
				sp->reserved_peak = A->pts[k].rss;
		if (A->npts) {
			sp->peak = (uint64_t)A->pts[A->peak_ev].live;
			sp->peak_ts = sp->peak ? A->pts[A->peak_ev].ts : 0;
			sp->live_end = A->pts[A->npts - 1].live;
		}
		m->nspaces++;
	}
	for (i = 0; i < G->nev; i++) {
		const struct prof_cuda_memory *r;
		struct mem_space *sp = &m->spaces[G->base_space + G->ev[i].space];

		if (G->ev[i].pool)
			continue;
		r = &p->memory[G->ev[i].idx];
		if (r->alloc) {
			sp->allocs++;
			sp->alloc_bytes += r->bytes;
		} else {
			sp->frees++;
		}
	}
	return 0;
}

/* Replay events [first, end) into G->live: allocations add their block
 * (with its site), releases remove it; up to (and including) the event
 * numbered stop of them when stop is not SIZE_MAX. */
static int gpu_replay(struct gpu_ctx *G, size_t first, size_t end, size_t stop,
		      struct mem_space *sp)
{
	const struct profile *p = G->p;
	size_t i, k = 0;

	for (i = first; i < end; i++, k++) {
		const struct prof_cuda_memory *r;
		struct gblk *b;

		if (stop != SIZE_MAX && k > stop)
			break;
		if (G->ev[i].pool)
			continue;
		r = &p->memory[G->ev[i].idx];
		if (sp && k == stop && r->alloc)
			sp->peak_range = range_at(p, r->process, r->ts);
		b = gmap_find(&G->live, r->process, r->address);
		if (r->alloc) {
			if (!b && !(b = gmap_put(&G->live, r->process, r->address)))
				return -ENOMEM;
			b->bytes = r->bytes;
			b->site = (uint32_t)site_of(&G->gs, p, r);
		} else if (b) {
			gmap_del(&G->live, b);
		}
	}
	return 0;
}

/* What space sp held at its peak, by site: the blocks live in G->live. */
static int gpu_space_at_peak(struct gpu_ctx *G, struct mem_space *sp)
{
	const struct gsites *gs = &G->gs;
	size_t j, npeak = 0;
	double *by;

	if (!(by = calloc(gs->n ? gs->n : 1, sizeof(*by))))
		return -ENOMEM;
	for (j = 0; j < G->live.cap; j++)
		if (G->live.b[j].used)
			by[G->live.b[j].site] += (double)G->live.b[j].bytes;
	for (j = 0; j < gs->n; j++)
		npeak += by[j] > 0;
	if (npeak > MEM_PEAK_SITES_MAX)
		npeak = MEM_PEAK_SITES_MAX;
	sp->at_peak = calloc(gs->n ? gs->n : 1, sizeof(*sp->at_peak));
	if (!sp->at_peak) {
		free(by);
		return -ENOMEM;
	}
	for (j = 0; j < gs->n; j++)
		if (by[j] > 0)
			sp->at_peak[sp->nat_peak++] = (struct mem_peak_site){ (uint32_t)j, by[j] };
	free(by);
	qsort(sp->at_peak, sp->nat_peak, sizeof(*sp->at_peak), cmp_peak_site);
	if (sp->nat_peak > npeak)
		sp->nat_peak = npeak;
	return 0;
}

/* Pass 2, per space: replay to the peak, then what was live there by site. */
static int gpu_at_peak(struct gpu_ctx *G)
{
	size_t e = 0, s;

	free(G->live.b);
	memset(&G->live, 0, sizeof(G->live));
	for (s = 0; s < G->ndevs; s++) {
		struct mem_space *sp = &G->m->spaces[G->base_space + s];
		size_t first = e;

		while (e < G->nev && G->ev[e].space == s)
			e++;
		if (!sp->peak)
			continue;
		if (gpu_replay(G, first, e, G->acc[s].peak_ev, sp) < 0 || gpu_space_at_peak(G, sp) < 0)
			return -ENOMEM;
		free(G->live.b);
		memset(&G->live, 0, sizeof(G->live));
	}
	return 0;
}

/* The sites: live at the end (bytes and blocks), median lifetime. */
static int gpu_sites_end(struct gpu_ctx *G)
{
	struct gsites *gs = &G->gs;
	size_t j;

	for (j = 0; j < gs->n; j++) {
		struct gsite_acc *sa = &G->sacc[j];

		gs->s[j].live_end_bytes = sa->live > 0 ? sa->live : 0;
		if (sa->nlife) {
			qsort(sa->life, sa->nlife, sizeof(*sa->life), util_u64_cmp);
			gs->s[j].median_life_ns = sa->life[sa->nlife / 2];
		}
	}
	/* blocks still live at the end, by site (pass 1's map was rebuilt: count again) */
	if (gpu_replay(G, 0, G->nev, SIZE_MAX, NULL) < 0)
		return -ENOMEM;
	for (j = 0; j < G->live.cap; j++)
		if (G->live.b[j].used)
			gs->s[G->live.b[j].site].live_end_blocks += 1;
	return 0;
}

/* Each site's heaviest stack: (site, stack) bytes summed, the largest kept. */
static int gpu_heaviest(struct gpu_ctx *G)
{
	const struct profile *p = G->p;
	struct gstack *gst = NULL;
	uint64_t *best = NULL;
	size_t n = 0, i, k;
	long site;
	int ret = -ENOMEM;

	for (i = 0; i < p->nmemory; i++)
		n += p->memory[i].alloc != 0;
	if (!(gst = calloc(n + 1, sizeof(*gst))) || !(best = calloc(G->gs.n + 1, sizeof(*best))))
		goto out;
	n = 0;
	for (i = 0; i < G->nev; i++) {
		const struct prof_cuda_memory *r;

		if (G->ev[i].pool || !(r = &p->memory[G->ev[i].idx])->alloc)
			continue;
		if ((site = site_of(&G->gs, p, r)) < 0)
			goto out;
		gst[n].site = (uint32_t)site;
		gst[n].stack = r->api < p->ncuda_api ? p->cuda_api[r->api].stack : PROF_NONE;
		gst[n].bytes = r->bytes;
		n++;
	}
	qsort(gst, n, sizeof(*gst), cmp_gstack);
	for (i = 0; i < n; i = k) {
		uint64_t sum = 0;

		for (k = i; k < n && gst[k].site == gst[i].site && gst[k].stack == gst[i].stack; k++)
			sum += gst[k].bytes;
		if (gst[i].stack != PROF_NONE && sum > best[gst[i].site]) {
			best[gst[i].site] = sum;
			G->gs.s[gst[i].site].stack = gst[i].stack;
		}
	}
	ret = 0;
out:
	free(best);
	free(gst);
	return ret;
}

/* Sites of a caching allocator: their blocks at the end are its cache. */
static void gpu_caching(struct gpu_ctx *G)
{
	const struct profile *p = G->p;
	struct gsites *gs = &G->gs;
	size_t i, j, s;

	for (j = 0; j < gs->n; j++)
		gs->s[j].caching = caching_stack(p, gs->s[j].stack);
	for (i = 0; i < G->nev; i++) {
		const struct prof_cuda_memory *r;
		long si;

		if (G->ev[i].pool || !(r = &p->memory[G->ev[i].idx])->alloc)
			continue;
		/* a site none of whose heaviest stacks says so may still have
		 * another stack through the allocator: any one is enough */
		if ((si = site_of(gs, p, r)) >= 0 && !gs->s[si].caching && r->api < p->ncuda_api)
			gs->s[si].caching = caching_stack(p, p->cuda_api[r->api].stack);
	}
	for (j = 0; j < gs->n; j++)
		for (s = 0; gs->s[j].caching && s < G->ndevs; s++)
			if (G->m->spaces[G->base_space + s].device == gs->s[j].device)
				G->m->spaces[G->base_space + s].cached_end +=
					(uint64_t)gs->s[j].live_end_bytes;
}

/* Append the sites to m by bytes desc; remap at_peak and add the leaks. */
static int gpu_append_sites(struct gpu_ctx *G)
{
	struct mem_analysis *m = G->m;
	const struct gsites *gs = &G->gs;
	uint32_t *order = NULL, *remap = NULL, *nl;
	struct mem_site *ns;
	size_t nleak = 0, l0 = m->nleaks, j, s;
	int ret = -ENOMEM;

	if (!(order = malloc((gs->n + 1) * sizeof(*order))) ||
	    !(remap = malloc((gs->n + 1) * sizeof(*remap))))
		goto out;
	for (j = 0; j < gs->n; j++)
		order[j] = (uint32_t)j;
	gsort_sites = gs->s;
	qsort(order, gs->n, sizeof(*order), cmp_site_bytes);
	if (!(ns = realloc(m->sites, (m->nsites + gs->n + 1) * sizeof(*ns))))
		goto out;
	m->sites = ns;
	for (j = 0; j < gs->n; j++) {
		m->sites[G->base_site + j] = gs->s[order[j]];
		remap[order[j]] = (uint32_t)(G->base_site + j);
		nleak += gs->s[order[j]].live_end_bytes > 0 && !gs->s[order[j]].caching;
	}
	m->nsites += gs->n;
	for (s = 0; s < G->ndevs; s++) {
		struct mem_space *sp = &m->spaces[G->base_space + s];

		for (j = 0; j < sp->nat_peak; j++)
			sp->at_peak[j].site = remap[sp->at_peak[j].site];
	}
	if (!(nl = realloc(m->leaks, (m->nleaks + nleak + 1) * sizeof(*nl))))
		goto out;
	m->leaks = nl;
	for (j = 0; j < gs->n; j++)
		if (m->sites[G->base_site + j].live_end_bytes > 0 && !m->sites[G->base_site + j].caching)
			m->leaks[m->nleaks++] = (uint32_t)(G->base_site + j);
	gsort_sites = m->sites;
	qsort(m->leaks + l0, m->nleaks - l0, sizeof(*m->leaks), cmp_site_leak);
	ret = 0;
out:
	free(order);
	free(remap);
	return ret;
}

int mem_gpu_analyze(const struct profile *p, struct mem_analysis *m)
{
	struct gpu_ctx G = { .p = p, .m = m, .base_space = m->nspaces, .base_site = m->nsites };
	size_t s, j;
	int ret = -ENOMEM;

	if (!p->nmemory)
		return 0;
	if (gpu_events(&G) < 0 || gpu_sweep(&G) < 0 || gpu_spaces(&G) < 0 ||
	    gpu_at_peak(&G) < 0 || gpu_sites_end(&G) < 0 || gpu_heaviest(&G) < 0)
		goto out;
	gpu_caching(&G);
	if (gpu_append_sites(&G) < 0)
		goto out;

	/* timelines last: downsampled copies owned by the spaces */
	for (s = 0; s < G.ndevs; s++) {
		struct mem_space *sp = &m->spaces[G.base_space + s];

		downsample(G.acc[s].pts, &G.acc[s].npts);
		sp->timeline = G.acc[s].pts;
		sp->ntimeline = G.acc[s].npts;
		G.acc[s].pts = NULL;
	}
	ret = 0;
out:
	if (G.acc)
		for (s = 0; s < G.ndevs; s++)
			free(G.acc[s].pts);
	if (G.sacc)
		for (j = 0; j < G.nsacc; j++)
			free(G.sacc[j].life);
	free(G.sacc);
	free(G.acc);
	free(G.ev);
	free(G.gs.s);
	util_map_free(&G.gs.map);
	free(G.pools);
	free(G.live.b);
	return ret;
}
