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

/* The site of allocation record r (index into gs->s), or -ENOMEM. */
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

static int cmp_u64v(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
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

int mem_gpu_analyze(const struct profile *p, struct mem_analysis *m)
{
	uint32_t devs[64 + 1];
	size_t ndevs = 0, nev = 0, i, j, s, base_space = m->nspaces, base_site = m->nsites;
	struct gev *ev = NULL;
	struct gspace_acc *acc = NULL;
	struct gsites gs = { 0 };
	struct gsite_acc *sacc = NULL;
	struct gstack *gst = NULL;
	size_t ngst = 0;
	struct gpool *pools = NULL;
	size_t npools = 0, cappools = 0;
	struct gmap live = { 0 };
	uint32_t *order = NULL, *remap = NULL;
	long site;
	int ret = -ENOMEM;

	if (!p->nmemory)
		return 0;
	/* the spaces: devices by id (up to 64), then pinned host */
	for (i = 0; i < p->nmemory; i++) {
		uint32_t d = space_device(&p->memory[i]);

		for (j = 0; j < ndevs && devs[j] != d; j++)
			;
		if (j == ndevs && ndevs < sizeof(devs) / sizeof(devs[0]))
			devs[ndevs++] = d;
	}
	qsort(devs, ndevs, sizeof(devs[0]), cmp_u32); /* MEM_DEVICE_PINNED sorts last */

	if (!(ev = calloc(p->nmemory + p->nmempools, sizeof(*ev))) ||
	    !(acc = calloc(ndevs, sizeof(*acc))))
		goto out;
	for (i = 0; i < p->nmemory; i++) {
		uint32_t d = space_device(&p->memory[i]);

		for (j = 0; j < ndevs && devs[j] != d; j++)
			;
		if (j == ndevs)
			continue;
		ev[nev++] = (struct gev){ p->memory[i].ts, (uint32_t)i, 0, (uint32_t)j };
	}
	for (i = 0; i < p->nmempools; i++) {
		for (j = 0; j < ndevs && devs[j] != p->mempools[i].device; j++)
			;
		if (j == ndevs)
			continue;
		ev[nev++] = (struct gev){ p->mempools[i].ts, (uint32_t)i, 1, (uint32_t)j };
	}
	qsort(ev, nev, sizeof(*ev), cmp_gev);
	/* one curve point per event: each space's array sized once */
	for (i = 0; i < nev; i++)
		acc[ev[i].space].npts++;
	for (s = 0; s < ndevs; s++) {
		if (!(acc[s].pts = calloc(acc[s].npts + 1, sizeof(*acc[s].pts))))
			goto out;
		acc[s].npts = 0;
	}

	/* pass 1: timeline, peak, sites' figures */
	for (i = 0; i < nev; i++) {
		struct gspace_acc *A = &acc[ev[i].space];
		struct mem_point *pt;

		if (ev[i].pool) {
			const struct prof_cuda_mempool *q = &p->mempools[ev[i].idx];

			if (pool_set(&pools, &npools, &cappools, q->process, ev[i].space, q->address,
				     q->op == CBN_MEMPOOL_DESTROYED ? 0 : q->size, &A->pool_sum) < 0)
				goto out;
		} else {
			const struct prof_cuda_memory *r = &p->memory[ev[i].idx];
			struct gblk *b;

			if (r->pool_address && r->pool_size &&
			    pool_set(&pools, &npools, &cappools, r->process, ev[i].space,
				     r->pool_address, r->pool_size, &A->pool_sum) < 0)
				goto out;
			if (r->alloc) {
				if ((site = site_of(&gs, p, r)) < 0)
					goto out;
				if ((size_t)site >= ngst || !sacc) {
					struct gsite_acc *n = realloc(sacc, gs.cap * sizeof(*n));

					if (!n)
						goto out;
					for (j = ngst; j < gs.cap; j++)
						memset(&n[j], 0, sizeof(n[j]));
					sacc = n;
					ngst = gs.cap;
				}
				if ((b = gmap_find(&live, r->process, r->address))) {
					/* a block allocated twice: its release was not seen */
					A->live -= b->bytes;
					if (!b->pooled && A->reserved_np >= b->bytes)
						A->reserved_np -= b->bytes;
					sacc[b->site].live -= (double)b->bytes;
					gmap_del(&live, b);
				}
				if (!(b = gmap_put(&live, r->process, r->address)))
					goto out;
				b->bytes = r->bytes;
				b->ts = r->ts;
				b->site = (uint32_t)site;
				b->pooled = r->pool_address != 0;
				A->live += r->bytes;
				if (!r->pool_address)
					A->reserved_np += r->bytes;
				gs.s[site].bytes += (double)r->bytes;
				gs.s[site].allocs += 1;
				gs.s[site].records++;
				sacc[site].live += (double)r->bytes;
				if (sacc[site].live > gs.s[site].max_live)
					gs.s[site].max_live = sacc[site].live;
			} else if ((b = gmap_find(&live, r->process, r->address))) {
				struct gsite_acc *sa = &sacc[b->site];
				uint64_t life = r->ts >= b->ts ? r->ts - b->ts : 0;

				A->live -= b->bytes;
				if (!b->pooled && A->reserved_np >= b->bytes)
					A->reserved_np -= b->bytes;
				sa->live -= (double)b->bytes;
				if (life < MEM_SHORT_NS)
					gs.s[b->site].short_lived += 1;
				if (sa->nlife == sa->caplife) {
					size_t c = sa->caplife ? sa->caplife * 2 : 8;
					uint64_t *n = realloc(sa->life, c * sizeof(*n));

					if (!n)
						goto out;
					sa->life = n;
					sa->caplife = c;
				}
				sa->life[sa->nlife++] = life;
				gmap_del(&live, b);
			}
		}
		pt = &A->pts[A->npts++];
		pt->ts = ev[i].ts;
		pt->live = (int64_t)A->live;
		pt->rss = A->reserved_np + A->pool_sum;
		if (A->npts == 1 || (uint64_t)pt->live > (uint64_t)A->pts[A->peak_ev].live)
			A->peak_ev = A->npts - 1;
	}

	/* the spaces */
	{
		struct mem_space *ns = realloc(m->spaces, (m->nspaces + ndevs) * sizeof(*ns));

		if (!ns)
			goto out;
		m->spaces = ns;
	}
	for (s = 0; s < ndevs; s++) {
		struct mem_space *sp = &m->spaces[base_space + s];
		struct gspace_acc *A = &acc[s];
		size_t k;

		memset(sp, 0, sizeof(*sp));
		sp->kind = MEM_SPACE_GPU;
		sp->process = PROF_NONE;
		sp->device = devs[s];
		sp->name = devs[s] == MEM_DEVICE_PINNED ? "pinned host"
			   : devs[s] < sizeof(gpu_names) / sizeof(gpu_names[0]) ? gpu_names[devs[s]]
										: "GPU";
		sp->peak_exact = 1;
		sp->peak_range = PROF_NONE;
		sp->total = device_total(p, devs[s]);
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
	for (i = 0; i < nev; i++) {
		const struct prof_cuda_memory *r;
		struct mem_space *sp = &m->spaces[base_space + ev[i].space];

		if (ev[i].pool)
			continue;
		r = &p->memory[ev[i].idx];
		if (r->alloc) {
			sp->allocs++;
			sp->alloc_bytes += r->bytes;
		} else {
			sp->frees++;
		}
	}

	/* pass 2, per space: replay to the peak, then what was live there by site */
	free(live.b);
	memset(&live, 0, sizeof(live));
	{
		size_t e = 0;

		for (s = 0; s < ndevs; s++) {
			struct mem_space *sp = &m->spaces[base_space + s];
			size_t first = e, k = 0, npeak = 0;
			double *by = NULL;

			while (e < nev && ev[e].space == s)
				e++;
			if (!sp->peak)
				continue;
			for (i = first; i < e; i++, k++) {
				const struct prof_cuda_memory *r;
				struct gblk *b;

				if (k > acc[s].peak_ev)
					break;
				if (ev[i].pool)
					continue;
				r = &p->memory[ev[i].idx];
				if (k == acc[s].peak_ev && r->alloc)
					sp->peak_range = range_at(p, r->process, r->ts);
				b = gmap_find(&live, r->process, r->address);
				if (r->alloc) {
					if (!b && !(b = gmap_put(&live, r->process, r->address)))
						goto out;
					b->bytes = r->bytes;
					b->site = (uint32_t)site_of(&gs, p, r);
				} else if (b) {
					gmap_del(&live, b);
				}
			}
			if (!(by = calloc(gs.n ? gs.n : 1, sizeof(*by))))
				goto out;
			for (j = 0; j < live.cap; j++)
				if (live.b[j].used)
					by[live.b[j].site] += (double)live.b[j].bytes;
			for (j = 0; j < gs.n; j++)
				npeak += by[j] > 0;
			if (npeak > MEM_PEAK_SITES_MAX)
				npeak = MEM_PEAK_SITES_MAX;
			sp->at_peak = calloc(gs.n ? gs.n : 1, sizeof(*sp->at_peak));
			if (!sp->at_peak) {
				free(by);
				goto out;
			}
			for (j = 0; j < gs.n; j++)
				if (by[j] > 0)
					sp->at_peak[sp->nat_peak++] =
						(struct mem_peak_site){ (uint32_t)j, by[j] };
			free(by);
			qsort(sp->at_peak, sp->nat_peak, sizeof(*sp->at_peak), cmp_peak_site);
			if (sp->nat_peak > npeak)
				sp->nat_peak = npeak;
			free(live.b);
			memset(&live, 0, sizeof(live));
		}
	}

	/* sites: live at the end, lifetimes, heaviest stack; then by bytes desc */
	for (j = 0; j < gs.n; j++) {
		struct gsite_acc *sa = &sacc[j];

		gs.s[j].live_end_bytes = sa->live > 0 ? sa->live : 0;
		if (sa->nlife) {
			qsort(sa->life, sa->nlife, sizeof(*sa->life), cmp_u64v);
			gs.s[j].median_life_ns = sa->life[sa->nlife / 2];
		}
	}
	/* blocks still live at the end, by site (pass 1's map was rebuilt: count again) */
	for (i = 0; i < nev; i++) {
		const struct prof_cuda_memory *r;
		struct gblk *b;

		if (ev[i].pool)
			continue;
		r = &p->memory[ev[i].idx];
		b = gmap_find(&live, r->process, r->address);
		if (r->alloc) {
			if (!b && !(b = gmap_put(&live, r->process, r->address)))
				goto out;
			b->bytes = r->bytes;
			b->site = (uint32_t)site_of(&gs, p, r);
		} else if (b) {
			gmap_del(&live, b);
		}
	}
	for (j = 0; j < live.cap; j++)
		if (live.b[j].used)
			gs.s[live.b[j].site].live_end_blocks += 1;
	/* each site's heaviest stack: (site, stack) bytes summed, the largest kept */
	{
		size_t n = 0, k;
		uint64_t *best;

		for (i = 0; i < p->nmemory; i++)
			n += p->memory[i].alloc != 0;
		if (!(gst = calloc(n + 1, sizeof(*gst))) ||
		    !(best = calloc(gs.n + 1, sizeof(*best))))
			goto out;
		n = 0;
		for (i = 0; i < nev; i++) {
			const struct prof_cuda_memory *r;

			if (ev[i].pool || !(r = &p->memory[ev[i].idx])->alloc)
				continue;
			if ((site = site_of(&gs, p, r)) < 0) {
				free(best);
				goto out;
			}
			gst[n].site = (uint32_t)site;
			gst[n].stack = r->api < p->ncuda_api ? p->cuda_api[r->api].stack : PROF_NONE;
			gst[n].bytes = r->bytes;
			n++;
		}
		qsort(gst, n, sizeof(*gst), cmp_gstack);
		for (i = 0; i < n; i = k) {
			uint64_t sum = 0;

			for (k = i; k < n && gst[k].site == gst[i].site && gst[k].stack == gst[i].stack;
			     k++)
				sum += gst[k].bytes;
			if (gst[i].stack != PROF_NONE && sum > best[gst[i].site]) {
				best[gst[i].site] = sum;
				gs.s[gst[i].site].stack = gst[i].stack;
			}
		}
		free(best);
	}

	/* sites of a caching allocator: their blocks at the end are its cache */
	for (j = 0; j < gs.n; j++)
		gs.s[j].caching = caching_stack(p, gs.s[j].stack);
	for (i = 0; i < nev; i++) {
		const struct prof_cuda_memory *r;
		long si;

		if (ev[i].pool || !(r = &p->memory[ev[i].idx])->alloc)
			continue;
		/* a site none of whose heaviest stacks says so may still have
		 * another stack through the allocator: any one is enough */
		if ((si = site_of(&gs, p, r)) >= 0 && !gs.s[si].caching && r->api < p->ncuda_api)
			gs.s[si].caching = caching_stack(p, p->cuda_api[r->api].stack);
	}
	for (j = 0; j < gs.n; j++)
		for (s = 0; gs.s[j].caching && s < ndevs; s++)
			if (m->spaces[base_space + s].device == gs.s[j].device)
				m->spaces[base_space + s].cached_end += (uint64_t)gs.s[j].live_end_bytes;

	/* append the sites by bytes desc; remap at_peak and add leaks */
	if (!(order = malloc((gs.n + 1) * sizeof(*order))) ||
	    !(remap = malloc((gs.n + 1) * sizeof(*remap))))
		goto out;
	for (j = 0; j < gs.n; j++)
		order[j] = (uint32_t)j;
	gsort_sites = gs.s;
	qsort(order, gs.n, sizeof(*order), cmp_site_bytes);
	{
		struct mem_site *ns = realloc(m->sites, (m->nsites + gs.n + 1) * sizeof(*ns));
		uint32_t *nl;
		size_t nleak = 0, l0 = m->nleaks;

		if (!ns)
			goto out;
		m->sites = ns;
		for (j = 0; j < gs.n; j++) {
			m->sites[base_site + j] = gs.s[order[j]];
			remap[order[j]] = (uint32_t)(base_site + j);
			nleak += gs.s[order[j]].live_end_bytes > 0 && !gs.s[order[j]].caching;
		}
		m->nsites += gs.n;
		for (s = 0; s < ndevs; s++) {
			struct mem_space *sp = &m->spaces[base_space + s];

			for (j = 0; j < sp->nat_peak; j++)
				sp->at_peak[j].site = remap[sp->at_peak[j].site];
		}
		if (!(nl = realloc(m->leaks, (m->nleaks + nleak + 1) * sizeof(*nl))))
			goto out;
		m->leaks = nl;
		for (j = 0; j < gs.n; j++)
			if (m->sites[base_site + j].live_end_bytes > 0 &&
			    !m->sites[base_site + j].caching)
				m->leaks[m->nleaks++] = (uint32_t)(base_site + j);
		gsort_sites = m->sites;
		qsort(m->leaks + l0, m->nleaks - l0, sizeof(*m->leaks), cmp_site_leak);
	}

	/* timelines last: downsampled copies owned by the spaces */
	for (s = 0; s < ndevs; s++) {
		struct mem_space *sp = &m->spaces[base_space + s];

		downsample(acc[s].pts, &acc[s].npts);
		sp->timeline = acc[s].pts;
		sp->ntimeline = acc[s].npts;
		acc[s].pts = NULL;
	}
	ret = 0;
out:
	if (acc)
		for (s = 0; s < ndevs; s++)
			free(acc[s].pts);
	if (sacc)
		for (j = 0; j < ngst; j++)
			free(sacc[j].life);
	free(sacc);
	free(acc);
	free(ev);
	free(gs.s);
	util_map_free(&gs.map);
	free(pools);
	free(live.b);
	free(gst);
	free(order);
	free(remap);
	return ret;
}
