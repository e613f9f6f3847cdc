/*
 * cuda_rules_mem.c — the CUDA memory rules (cuda_rules.c has the table):
 * cudaMalloc/cudaFree churn, scarce pinned host memory, device memory near
 * full; the last two read the memory view's GPU spaces (analysed once, before
 * the CUDA view: cuda_rule_ctx.mem).
 */
#include <string.h>
#include <unistd.h>

#include "cuda_rules_int.h"
#include "memory.h"
#include "util.h"

/* --- memory rules -------------------------------------------------------- */

/* Synchronous device allocation calls (names as the API rows show them):
 * each may synchronize the device and costs a driver round trip. */
static int is_sync_alloc(const char *n)
{
	static const char *const names[] = {
		"cudaMalloc", "cudaFree", "cudaMallocPitch", "cudaMalloc3D", "cudaMallocArray",
		"cudaFreeArray", "cuMemAlloc", "cuMemFree", "cuMemAllocPitch",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(n, names[i]) == 0)
			return 1;
	return 0;
}

static int cmp_site_key(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;

	return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : x[1] < y[1] ? -1 : x[1] > y[1];
}

/* The call site (function, file:line) most of calls[0 .. n) come from, into
 * buf; "" when none has a stack. */
static void top_site(const struct profile *p, const uint32_t *calls, size_t n, char *buf,
		     size_t len)
{
	uint32_t *key = calloc(2 * n + 2, sizeof(*key)), best[2] = { 0, 0 };
	size_t i, j, k = 0, bestn = 0;

	buf[0] = '\0';
	if (!key)
		return;
	for (i = 0; i < n; i++) {
		const struct prof_cuda_api *c = &p->cuda_api[calls[i]];
		uint32_t f = c->stack != PROF_NONE ? cuda_site_frame(p, c->stack, NULL) : CUDA_NO_IDX;

		if (f == CUDA_NO_IDX || f >= p->nframes || p->frames[f].func >= p->nfuncs)
			continue;
		key[2 * k] = p->frames[f].func;
		key[2 * k + 1] = f;
		k++;
	}
	/* by function; the first frame of the largest group names the line */
	qsort(key, k, 2 * sizeof(*key), cmp_site_key);
	for (i = 0; i < k; i = j) {
		for (j = i; j < k && key[2 * j] == key[2 * i]; j++)
			;
		if (j - i > bestn) {
			bestn = j - i;
			best[0] = key[2 * i];
			best[1] = key[2 * i + 1];
		}
	}
	if (bestn) {
		const struct prof_frame *fr = &p->frames[best[1]];
		const char *file = fr->file && *fr->file ? fr->file : p->funcs[best[0]].file;
		const char *slash = file ? strrchr(file, '/') : NULL;

		snprintf(buf, len, "; top allocation site: %s (%s:%u), %zu calls",
			 p->funcs[best[0]].name, slash ? slash + 1 : file ? file : "?", fr->line,
			 bestn);
	}
	free(key);
}

static const struct prof_range *sort_ranges; /* qsort has no context argument */

static int cmp_range_ts(const void *a, const void *b)
{
	const struct prof_range *x = &sort_ranges[*(const uint32_t *)a];
	const struct prof_range *y = &sort_ranges[*(const uint32_t *)b];

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* How far back a call looks for the repeating ranges enclosing it. */
#define CHURN_RANGE_LOOKBACK 256

/* The range name, seen at least CUDA_MALLOC_CHURN_REPEAT times, whose
 * instances hold most of calls[0 .. n) (same thread): *inside, *instances. */
static const char *repeating_range(const struct cuda_rule_ctx *c, const uint32_t *calls, size_t n,
				   size_t *inside, size_t *instances)
{
	const struct profile *p = c->p;
	struct cuda_smap m = { 0 };
	size_t *cnt = NULL, *hold = NULL, ng = 0, nr = 0, i, capn = 0, capc = 0, best = SIZE_MAX;
	const char **gname = NULL;
	uint32_t *gid = NULL, *ord = NULL, *mark = NULL;
	const char *res = NULL;
	int added;

	*inside = *instances = 0;
	if (!p->nranges || !(gid = calloc(p->nranges, sizeof(*gid))) ||
	    !(ord = calloc(p->nranges, sizeof(*ord))))
		goto out;
	for (i = 0; i < p->nranges; i++) {
		uint32_t g;

		gid[i] = CUDA_NO_IDX;
		if (!c->range_names[i] || !range_is_span(&p->ranges[i]))
			continue;
		g = cuda_smap_get(&m, c->range_names[i], (uint32_t)ng, &added);
		if (g == CUDA_NO_IDX)
			goto out;
		if (added) {
			if (util_grow((void **)&gname, &capn, ng, sizeof(*gname)) ||
			    util_grow((void **)&cnt, &capc, ng, sizeof(*cnt)))
				goto out;
			gname[ng] = c->range_names[i];
			cnt[ng++] = 0;
		}
		cnt[g]++;
		gid[i] = g;
	}
	if (!ng || !(hold = calloc(ng, sizeof(*hold))) || !(mark = calloc(ng, sizeof(*mark))))
		goto out;
	for (i = 0; i < p->nranges; i++)
		if (gid[i] != CUDA_NO_IDX && cnt[gid[i]] >= CUDA_MALLOC_CHURN_REPEAT)
			ord[nr++] = (uint32_t)i;
	sort_ranges = p->ranges;
	qsort(ord, nr, sizeof(*ord), cmp_range_ts);
	for (i = 0; i < n; i++) {
		const struct prof_cuda_api *a = &p->cuda_api[calls[i]];
		size_t lo = 0, hi = nr, k, seen = 0;

		while (lo < hi) { /* first range after (thread, start) */
			size_t mid = (lo + hi) / 2;
			const struct prof_range *r = &p->ranges[ord[mid]];

			if (r->thread < a->thread || (r->thread == a->thread && r->start <= a->start))
				lo = mid + 1;
			else
				hi = mid;
		}
		for (k = lo; k > 0 && seen < CHURN_RANGE_LOOKBACK; k--, seen++) {
			const struct prof_range *r = &p->ranges[ord[k - 1]];
			uint32_t g = gid[ord[k - 1]];

			if (r->thread != a->thread)
				break;
			/* each name counts a call once (mark: the call that last counted it) */
			if (a->start <= r->end && mark[g] != calls[i] + 1) {
				mark[g] = calls[i] + 1;
				hold[g]++;
			}
		}
	}
	for (i = 0; i < ng; i++)
		if (cnt[i] >= CUDA_MALLOC_CHURN_REPEAT && hold[i] &&
		    (best == SIZE_MAX || hold[i] > hold[best] ||
		     (hold[i] == hold[best] && cnt[i] > cnt[best])))
			best = i;
	if (best != SIZE_MAX) {
		res = gname[best];
		*inside = hold[best];
		*instances = cnt[best];
	}
out:
	cuda_smap_free(&m);
	free(cnt);
	free(hold);
	free(gname);
	free(gid);
	free(ord);
	free(mark);
	return res;
}

/* cudaMalloc/cudaFree called over and over during the run: every call may
 * synchronize the device; a caching allocator or the stream-ordered one
 * (cudaMallocAsync) serves repeated sizes without the driver. */
int cuda_rule_malloc_churn(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_rule_ctx *c = ctx;
	const struct profile *p = c->p;
	uint32_t *calls = NULL;
	size_t n = 0, nalloc = 0, i, k, inside = 0, instances = 0, nslices = 0;
	uint64_t lo = UINT64_MAX, hi = 0, ns = 0;
	unsigned char slice[10] = { 0 };
	const char *range = NULL;
	char b1[32], site[512];
	int ret = 0;

	for (i = 0; i < p->ncuda_api; i++) {
		const struct prof_cuda_api *a = &p->cuda_api[i];

		if (a->start < lo)
			lo = a->start;
		if (a->end > hi)
			hi = a->end;
		n += is_sync_alloc(cuda_api_name(a));
	}
	if (n < CUDA_MALLOC_CHURN_MIN_CALLS || !(calls = calloc(n, sizeof(*calls))))
		return n < CUDA_MALLOC_CHURN_MIN_CALLS ? 0 : -ENOMEM;
	n = 0;
	for (i = 0; i < p->ncuda_api; i++) {
		const struct prof_cuda_api *a = &p->cuda_api[i];
		const char *name = cuda_api_name(a);

		if (!is_sync_alloc(name))
			continue;
		calls[n++] = (uint32_t)i;
		nalloc += strstr(name, "Free") == NULL;
		ns += dur(a->start, a->end);
		if (hi > lo)
			slice[(size_t)((double)(a->start - lo) / (double)(hi - lo + 1) * 10)] = 1;
	}
	for (i = 0; i < 10; i++)
		nslices += slice[i];
	range = repeating_range(c, calls, n, &inside, &instances);
	if (nslices >= CUDA_MALLOC_CHURN_SLICES ||
	    (range && inside >= CUDA_MALLOC_CHURN_MIN_CALLS / 2)) {
		char where[256] = "";

		/* the allocations' site: where the buffers come from (their
		 * frees are often elsewhere, in cleanup code) */
		for (i = 0, k = 0; i < n; i++)
			if (!strstr(cuda_api_name(&p->cuda_api[calls[i]]), "Free"))
				calls[k++] = calls[i];
		top_site(p, calls, k ? k : n, site, sizeof(site));
		if (range)
			snprintf(where, sizeof(where), "; %zu inside range \"%s\" (%zu instances)",
				 inside, range, instances);
		ret = rules_fire(pass,
				 "%zu synchronous allocation calls (%zu allocations, %zu frees) took %s "
				 "of CPU time, in %zu of 10 slices of the run%s%s",
				 n, nalloc, n - nalloc, util_fmt_dur(b1, sizeof(b1), (double)ns), nslices, where,
				 site);
	}
	free(calls);
	return ret;
}

static uint64_t host_ram(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

static int is_pinned_alloc(const char *n)
{
	return strcmp(n, "cudaMallocHost") == 0 || strcmp(n, "cudaHostAlloc") == 0 ||
	       strcmp(n, "cuMemAllocHost") == 0 || strcmp(n, "cuMemHostAlloc") == 0;
}

static double mib(uint64_t b)
{
	return (double)b / (1024.0 * 1024.0);
}

/* Pinned host memory that could not be had, or that takes a large share of
 * the machine's RAM (page-locked: the kernel can neither swap nor reclaim it). */
int cuda_rule_pinned_memory(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_rule_ctx *c = ctx;
	const struct profile *p = c->p;
	const struct mem_analysis *m = c->mem;
	uint64_t failed = 0, ram = host_ram(), peak = 0;
	const char *fname = NULL;
	int32_t err = 0;
	size_t i;
	int ret = 0;

	for (i = 0; i < p->ncuda_api; i++) {
		const struct prof_cuda_api *a = &p->cuda_api[i];

		if (a->ret != 0 && is_pinned_alloc(cuda_api_name(a))) {
			if (!failed++) {
				fname = cuda_api_name(a);
				err = a->ret;
			}
		}
	}
	for (i = 0; m && i < m->nspaces; i++)
		if (m->spaces[i].kind == MEM_SPACE_GPU && m->spaces[i].device == MEM_DEVICE_PINNED)
			peak = m->spaces[i].peak;
	if (failed)
		ret = rules_fire(pass,
				 "%llu pinned host allocations failed (first: %s returned %d); "
				 "pinned peak %.1f MiB",
				 (unsigned long long)failed, fname, (int)err, mib(peak));
	else if (ram && (double)peak >= CUDA_PINNED_HOST_SHARE * (double)ram)
		ret = rules_fire(pass,
				 "pinned host memory peaked at %.1f MiB = %.1f%% of this machine's "
				 "%.1f MiB of RAM",
				 mib(peak), 100.0 * (double)peak / (double)ram, mib(ram));
	return ret;
}

/* A device whose live allocations came within CUDA_GPU_MEM_NEAR of its memory. */
int cuda_rule_gpu_memory_full(const void *ctx, struct rules_pass *pass)
{
	const struct profile *p = ((const struct cuda_rule_ctx *)ctx)->p;
	const struct mem_analysis *m = ((const struct cuda_rule_ctx *)ctx)->mem;
	size_t i;
	int ret = 0;

	for (i = 0; m && i < m->nspaces && ret == 0; i++) {
		const struct mem_space *s = &m->spaces[i];
		char where[160] = "";
		char b1[32];

		if (s->kind != MEM_SPACE_GPU || s->device == MEM_DEVICE_PINNED || !s->total ||
		    (double)s->peak < CUDA_GPU_MEM_NEAR * (double)s->total)
			continue;
		if (s->peak_range != PROF_NONE && s->peak_range < p->nranges)
			snprintf(where, sizeof(where), " in range \"%s\"",
				 p->ranges[s->peak_range].name);
		ret = rules_fire(pass,
				 "%s: allocations peaked at %.1f MiB = %.1f%% of its %.1f MiB, %s after "
				 "the start%s",
				 s->name, mib(s->peak), 100.0 * (double)s->peak / (double)s->total,
				 mib(s->total),
				 util_fmt_dur(b1, sizeof(b1), (double)(s->peak_ts > p->start_ns
								      ? s->peak_ts - p->start_ns
								      : 0)),
				 where);
	}
	return ret < 0 ? ret : 0;
}

