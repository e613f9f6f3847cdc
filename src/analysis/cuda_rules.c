/*
 * cuda_rules.c — the CUDA recommendations: one test per rule over the tables
 * and the overview, and the table cuda_rules[] (at the end) that gives each
 * its id, advice and order in the report (docs/cuda.md, "Recommendations").
 * To add a rule, write its test here and add its entry where its findings
 * should appear.
 */
#include <string.h>

#include "span.h"
#include "util.h"
#include <unistd.h>

#include "cuda_int.h"
#include "memory.h"
#include "ops.h"
#include "rules.h"

/* What a test looks at. */
struct cuda_rule_ctx {
	const struct cuda_analysis *a;   /* tables and overview, complete */
	const struct profile *p;
	const char **range_names;        /* row name of range i, NULL for instants */
	uint64_t *scratch;               /* room for nranges durations, any test's to use */
	const struct op_analysis *ops;   /* operators (ops.h), NULL when none */
};


static int overhead_bound(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_analysis *a = ((const struct cuda_rule_ctx *)ctx)->a;
	const struct cuda_overview *ov = &a->ov;
	char b1[32], b2[32], b3[32];

	if (strcmp(ov->verdict, "overhead-bound"))
		return 0;
	return rules_fire(pass,
			  "GPU utilization %.1f%% over a %s window; non-synchronizing CUDA API "
			  "time %s (%.1f%% of the window); %llu kernels, median %s",
			  100 * ov->gpu_utilization, util_fmt_dur(b1, sizeof(b1), (double)ov->window_ns),
			  util_fmt_dur(b2, sizeof(b2), (double)ov->launch_api_ns),
			  ov->window_ns ? 100.0 * ov->launch_api_ns / ov->window_ns : 0.0,
			  (unsigned long long)a->totals.kernels,
			  util_fmt_dur(b3, sizeof(b3), ov->median_kernel_ns));
}

static int sync_dominated(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_rule_ctx *c = ctx;
	const struct cuda_analysis *a = c->a;
	const struct cuda_overview *ov = &a->ov;
	const struct cuda_api_row *top = NULL;
	struct run_span sp;
	uint64_t wall;

	char b1[32], b2[32], b3[32];
	size_t i;

	/* the span the run recorded (span.h): the capture windows when there
	 * are any */
	span_of_run(c->p, &sp);
	wall = sp.ns ? sp.ns : ov->window_ns;
	if (!wall || (double)ov->sync_blocked_ns <= CUDA_SYNC_FRACTION * (double)wall)
		return 0;
	for (i = 0; i < a->napi; i++)
		if (cuda_api_is_sync(a->api[i].name)) {
			top = &a->api[i];
			break;
		}
	return rules_fire(pass,
			  "CPU blocked %s in synchronizing calls = %.1f%% of the %s run%s%s%s",
			  util_fmt_dur(b1, sizeof(b1), (double)ov->sync_blocked_ns),
			  100.0 * ov->sync_blocked_ns / wall, util_fmt_dur(b2, sizeof(b2), (double)wall),
			  top ? "; largest: " : "", top ? top->name : "",
			  top ? util_fmt_dur(b3, sizeof(b3), (double)top->t.total) : "");
}

static int pageable_copies(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_analysis *a = ((const struct cuda_rule_ctx *)ctx)->a;
	uint64_t n = 0, ns = 0, bytes = 0, htod = 0, dtoh = 0;
	char b1[32];
	size_t i;

	for (i = 0; i < a->nmemops; i++) {
		const struct cuda_memop_row *r = &a->memops[i];

		if (r->kind != CUDA_ROW_MEMCPY ||
		    (r->copy_kind != CBN_COPY_HTOD && r->copy_kind != CBN_COPY_DTOH))
			continue;
		n += r->pageable;
		ns += r->pageable_ns;
		bytes += r->pageable_bytes;
		if (r->copy_kind == CBN_COPY_HTOD)
			htod += r->pageable;
		else
			dtoh += r->pageable;
	}
	/* A stray 4-byte result copy is not worth a recommendation. */
	if (!n || (ns < CUDA_PAGEABLE_MIN_NS &&
		   (double)ns < CUDA_PAGEABLE_MIN_SHARE * (double)a->ov.gpu_ns))
		return 0;
	return rules_fire(pass,
			  "%llu copies from/to pageable host memory (HtoD %llu, DtoH %llu): "
			  "%s of GPU time, %llu bytes",
			  (unsigned long long)n, (unsigned long long)htod, (unsigned long long)dtoh,
			  util_fmt_dur(b1, sizeof(b1), (double)ns), (unsigned long long)bytes);
}

static int tiny_kernels(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_analysis *a = ((const struct cuda_rule_ctx *)ctx)->a;
	char b1[32];

	if (a->totals.kernels <= CUDA_TINY_KERNELS_MIN ||
	    a->ov.median_kernel_ns >= CUDA_TINY_KERNEL_NS)
		return 0;
	return rules_fire(pass, "%llu kernel launches with a median duration of %s",
			  (unsigned long long)a->totals.kernels,
			  util_fmt_dur(b1, sizeof(b1), a->ov.median_kernel_ns));
}

static int small_grid(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_analysis *a = ((const struct cuda_rule_ctx *)ctx)->a;
	size_t i;
	int ret;

	for (i = 0; i < a->nkernels; i++) {
		const struct cuda_kernel_row *k = &a->kernels[i];

		if (k->blocks_per_sm < 0 || k->blocks_per_sm >= CUDA_SMALL_GRID_BLOCKS ||
		    k->time_pct < 100 * CUDA_SIGNIFICANT_SHARE)
			continue;
		ret = rules_fire(pass,
				 "%s: %.2f blocks per SM (grid %dx%dx%d) and %.1f%% of kernel time",
				 k->display, k->blocks_per_sm, k->grid[0], k->grid[1], k->grid[2],
				 k->time_pct);
		if (ret)
			return ret;
	}
	return 0;
}

static int cold_kernel(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_analysis *a = ((const struct cuda_rule_ctx *)ctx)->a;
	char b1[32], b2[32];
	size_t i;
	int ret;

	for (i = 0; i < a->nkernels; i++) {
		const struct cuda_kernel_row *k = &a->kernels[i];

		if (k->t.count < 2 || (double)k->first_ns <= CUDA_COLD_RATIO * k->rest_med_ns ||
		    (double)k->first_ns - k->rest_med_ns <= CUDA_COLD_MIN_NS)
			continue;
		ret = rules_fire(pass,
				 "%s: first instance %s vs median %s of the other %llu (%.1fx)",
				 k->display, util_fmt_dur(b1, sizeof(b1), (double)k->first_ns),
				 util_fmt_dur(b2, sizeof(b2), k->rest_med_ns),
				 (unsigned long long)(k->t.count - 1),
				 k->rest_med_ns > 0 ? k->first_ns / k->rest_med_ns : 0.0);
		if (ret)
			return ret;
	}
	return 0;
}

/* Cold start among repeated ranges: the earliest instance of a name against
 * the median of the others.  Ranges are grouped by name first (one pass),
 * so many distinct names cost nothing extra. */
static int cold_range(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_rule_ctx *c = ctx;
	const struct profile *p = c->p;
	const char **range_names = c->range_names;
	uint64_t *scratch = c->scratch;
	struct cuda_smap m = { 0 };
	uint32_t *gid = util_reallocarray(NULL, p->nranges + 1, sizeof(*gid));
	uint32_t *first = NULL, *members = NULL;
	size_t *off = NULL, *fill = NULL, ng = 0, gcap = 0, i, j;
	int added, ret = -ENOMEM;

	if (!gid)
		goto out;
	for (i = 0; i < p->nranges; i++) {
		uint32_t g;

		gid[i] = CUDA_NO_IDX;
		if (!range_names[i] || !range_is_span(&p->ranges[i]))
			continue;
		g = cuda_smap_get(&m, range_names[i], (uint32_t)ng, &added);
		if (g == CUDA_NO_IDX)
			goto out;
		if (added) {
			if (util_grow((void **)&first, &gcap, ng, sizeof(*first)))
				goto out;
			first[ng++] = (uint32_t)i;
		} else if (p->ranges[i].start < p->ranges[first[g]].start) {
			first[g] = (uint32_t)i;
		}
		gid[i] = g;
	}
	off = calloc(ng + 2, sizeof(*off));
	fill = calloc(ng + 2, sizeof(*fill));
	members = util_reallocarray(NULL, p->nranges + 1, sizeof(*members));
	if (!off || !fill || !members)
		goto out;
	for (i = 0; i < p->nranges; i++)
		if (gid[i] != CUDA_NO_IDX)
			off[gid[i] + 1]++;
	for (j = 0; j < ng; j++)
		off[j + 1] += off[j];
	memcpy(fill, off, (ng + 1) * sizeof(*fill));
	for (i = 0; i < p->nranges; i++)
		if (gid[i] != CUDA_NO_IDX)
			members[fill[gid[i]]++] = (uint32_t)i;
	ret = 0;
	for (j = 0; j < ng && !ret; j++) {
		const struct prof_range *f = &p->ranges[first[j]];
		uint64_t d0 = dur(f->start, f->end), n = 0;
		double med;
		char b1[32], b2[32];

		for (i = off[j]; i < off[j + 1]; i++)
			if (members[i] != first[j])
				scratch[n++] = dur(p->ranges[members[i]].start,
						   p->ranges[members[i]].end);
		if (n < 2)
			continue;
		qsort(scratch, n, sizeof(*scratch), cmp_u64);
		med = n % 2 ? (double)scratch[n / 2] : (scratch[n / 2 - 1] + scratch[n / 2]) / 2.0;
		if ((double)d0 <= CUDA_COLD_RATIO * med || (double)d0 - med <= CUDA_COLD_MIN_NS)
			continue;
		ret = rules_fire(pass,
				 "range \"%s\": first instance %s vs median %s of the other %llu "
				 "(%.1fx)",
				 range_names[first[j]], util_fmt_dur(b1, sizeof(b1), (double)d0),
				 util_fmt_dur(b2, sizeof(b2), med), (unsigned long long)n,
				 med > 0 ? d0 / med : 0.0);
	}
out:
	cuda_smap_free(&m);
	free(gid);
	free(first);
	free(members);
	free(off);
	free(fill);
	return ret;
}

static int cmp_step(const void *a, const void *b, void *ranges)
{
	const struct prof_range *x = &((const struct prof_range *)ranges)[*(const uint32_t *)a];
	const struct prof_range *y = &((const struct prof_range *)ranges)[*(const uint32_t *)b];

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Cold start over iterations: cbn_step() markers are instants, and an
 * iteration is the time from one marker to the next on the same thread. */
static int cold_iteration(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_rule_ctx *c = ctx;
	const struct profile *p = c->p;
	uint64_t *scratch = c->scratch;
	uint32_t *st = util_reallocarray(NULL, p->nranges + 1, sizeof(*st));
	size_t n = 0, i, j, k;
	int ret = 0;

	if (!st)
		return -ENOMEM;
	for (i = 0; i < p->nranges; i++)
		if (p->ranges[i].kind == CBN_RANGE_STEP && p->ranges[i].thread != PROF_NONE)
			st[n++] = (uint32_t)i;
	qsort_r(st, n, sizeof(*st), cmp_step, p->ranges);
	for (i = 0; i < n && !ret; i = j) {
		uint32_t th = p->ranges[st[i]].thread;
		uint64_t first, m = 0;
		double med;
		char b1[32], b2[32];

		for (j = i; j < n && p->ranges[st[j]].thread == th; j++)
			;
		if (j - i < 4)   /* at least three iterations: one first, two to compare */
			continue;
		first = dur(p->ranges[st[i]].start, p->ranges[st[i + 1]].start);
		for (k = i + 1; k + 1 < j; k++)
			scratch[m++] = dur(p->ranges[st[k]].start, p->ranges[st[k + 1]].start);
		qsort(scratch, m, sizeof(*scratch), cmp_u64);
		med = m % 2 ? (double)scratch[m / 2] : (scratch[m / 2 - 1] + scratch[m / 2]) / 2.0;
		if ((double)first <= CUDA_COLD_RATIO * med ||
		    (double)first - med <= CUDA_COLD_MIN_NS)
			continue;
		ret = rules_fire(pass,
				 "iterations between step markers on thread %u: first %s vs median "
				 "%s of the other %llu (%.1fx)",
				 th < p->nthreads ? p->threads[th].tid : 0,
				 util_fmt_dur(b1, sizeof(b1), (double)first), util_fmt_dur(b2, sizeof(b2), med),
				 (unsigned long long)m, med > 0 ? first / med : 0.0);
	}
	free(st);
	return ret;
}

static int variable_kernel(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_analysis *a = ((const struct cuda_rule_ctx *)ctx)->a;
	char b1[32], b2[32], b3[32], b4[32];
	size_t i;
	int ret;

	for (i = 0; i < a->nkernels; i++) {
		const struct cuda_kernel_row *k = &a->kernels[i];
		double cv = k->t.avg > 0 ? k->t.stddev / k->t.avg : 0;

		if (k->t.count < CUDA_VARIABLE_MIN_INSTANCES || cv <= CUDA_VARIABLE_CV ||
		    k->time_pct < 100 * CUDA_SIGNIFICANT_SHARE)
			continue;
		ret = rules_fire(pass,
				 "%s: %llu instances, mean %s, stddev %s (CV %.2f), min %s, max %s",
				 k->display, (unsigned long long)k->t.count,
				 util_fmt_dur(b1, sizeof(b1), k->t.avg), util_fmt_dur(b2, sizeof(b2), k->t.stddev),
				 cv,
				 util_fmt_dur(b3, sizeof(b3), (double)k->t.min),
				 util_fmt_dur(b4, sizeof(b4), (double)k->t.max));
		if (ret)
			return ret;
	}
	return 0;
}

/* DtoD/PtoP copies the code did not ask for: launched by an API call that is
 * not a memcpy, or peer copies made by a plain memcpy (UVA cudaMemcpy between
 * devices) rather than a Peer call. */
static int implicit_dtod(const void *ctx, struct rules_pass *pass)
{
	const struct profile *p = ((const struct cuda_rule_ctx *)ctx)->p;
	uint64_t n = 0, ns = 0, bytes = 0;
	const char *via = NULL;
	char b1[32];
	size_t i;

	for (i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *op = &p->gpu_ops[i];
		const char *an;

		if (op->kind != PROF_GPU_MEMCPY ||
		    (op->copy_kind != CBN_COPY_DTOD && op->copy_kind != CBN_COPY_PTOP) ||
		    op->api == PROF_NONE || op->api >= p->ncuda_api)
			continue;
		an = nz(p->cuda_api[op->api].name);
		if (strcasestr(an, "memcpy") &&
		    (op->copy_kind == CBN_COPY_DTOD || strstr(an, "Peer")))
			continue;
		n++;
		ns += dur(op->start, op->end);
		bytes += op->bytes;
		if (!via)
			via = an;
	}
	if (!n)
		return 0;
	return rules_fire(pass,
			  "%llu device-to-device/peer copies (%s, %llu bytes) launched by calls "
			  "that are not explicit device copies, e.g. %s",
			  (unsigned long long)n, util_fmt_dur(b1, sizeof(b1), (double)ns),
			  (unsigned long long)bytes, via);
}

/* Utilization counts kernels only; a run that keeps the GPU busy with copies
 * (few idle gaps) is not idle, so the gaps must agree. */
static int low_utilization(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_overview *ov = &((const struct cuda_rule_ctx *)ctx)->a->ov;
	char b1[32], b2[32], b3[32], b4[32];

	if (ov->gpu_utilization < 0 || ov->gpu_utilization >= CUDA_LOW_UTIL ||
	    (double)ov->idle_gaps_ns < (1.0 - CUDA_LOW_UTIL) * (double)ov->window_ns)
		return 0;
	return rules_fire(pass,
			  "GPU utilization %.1f%%: kernels ran %s of a %s window; %llu idle gaps "
			  "totalling %s, largest %s",
			  100 * ov->gpu_utilization, util_fmt_dur(b1, sizeof(b1), (double)ov->gpu_busy_ns),
			  util_fmt_dur(b2, sizeof(b2), (double)ov->window_ns),
			  (unsigned long long)ov->ngaps,
			  util_fmt_dur(b3, sizeof(b3), (double)ov->idle_gaps_ns),
			  util_fmt_dur(b4, sizeof(b4), (double)ov->largest_gap_ns));
}

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
static int malloc_churn(const void *ctx, struct rules_pass *pass)
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
static int pinned_memory(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_rule_ctx *c = ctx;
	const struct profile *p = c->p;
	struct mem_analysis *m = NULL;
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
	if (p->nmemory) {
		if (!(m = calloc(1, sizeof(*m))) || mem_gpu_analyze(p, m) < 0) {
			mem_free(m);
			return -ENOMEM;
		}
		for (i = 0; i < m->nspaces; i++)
			if (m->spaces[i].kind == MEM_SPACE_GPU &&
			    m->spaces[i].device == MEM_DEVICE_PINNED)
				peak = m->spaces[i].peak;
		mem_free(m);
	}
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
static int gpu_memory_full(const void *ctx, struct rules_pass *pass)
{
	const struct profile *p = ((const struct cuda_rule_ctx *)ctx)->p;
	struct mem_analysis *m;
	size_t i;
	int ret = 0;

	if (!p->nmemory)
		return 0;
	if (!(m = calloc(1, sizeof(*m))) || mem_gpu_analyze(p, m) < 0) {
		mem_free(m);
		return -ENOMEM;
	}
	for (i = 0; i < m->nspaces && ret == 0; i++) {
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
	mem_free(m);
	return ret < 0 ? ret : 0;
}

/* --- framework-aware rules: what the kernels' names say ----------------------- */

/* 1 if the (lower-cased) kernel name holds one of the words. */
static int name_has(const char *lname, const char *const *words, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strstr(lname, words[i]))
			return 1;
	return 0;
}

static void lower(char *dst, size_t len, const char *src)
{
	size_t i;

	for (i = 0; src && src[i] && i + 1 < len; i++)
		dst[i] = (char)(src[i] >= 'A' && src[i] <= 'Z' ? src[i] - 'A' + 'a' : src[i]);
	dst[i] = '\0';
}

/* cuDNN's (and TensorRT's) layout transposes between NCHW and NHWC. */
static int is_layout_transpose(const char *lname)
{
	static const char *const w[] = { "nchwtonhwc", "nhwctonchw" };

	return name_has(lname, w, 2);
}

/* fp32 matrix multiplies and convolutions on the CUDA cores: cuBLAS's and
 * CUTLASS's sgemm, xmma kernels computing in f32 (not tf32), cuDNN's scudnn
 * and *_convolve_sgemm.  Tensor-core kernels (tf32, f16, bf16, hmma, the
 * s1688/s16816 TF32 tiles, "tensorop") are not. */
static int is_fp32_math(const char *lname)
{
	static const char *const yes[] = { "sgemm", "_f32f32_f32f32_f32", "scudnn",
					   "convolve_sgemm", "gemmsn_" };
	static const char *const no[] = { "tf32", "tensorop", "hmma", "f16", "bf16", "s1688",
					  "s16816", "h1688", "i8816", "imma" };

	return name_has(lname, yes, sizeof(yes) / sizeof(yes[0])) &&
	       !name_has(lname, no, sizeof(no) / sizeof(no[0]));
}

/* PyTorch's (and others') pointwise kernels. */
static int is_elementwise(const char *lname)
{
	static const char *const w[] = { "elementwise_kernel", "elementwise" };

	return name_has(lname, w, 2);
}

struct op_count {
	uint32_t row;
	uint64_t n, ns;
};

static int cmp_op_count(const void *a, const void *b)
{
	const struct op_count *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/* "; launched from aten::cudnn_convolution (90%), aten::copy_ (10%)": the
 * operators (innermost on the launch stacks) behind the GPU ops sel[0..n),
 * by GPU time, three at most; "" without operators. */
static void by_operator(const struct cuda_rule_ctx *c, const uint32_t *sel, size_t n, char *buf,
			size_t len)
{
	const struct op_analysis *ops = c->ops;
	const struct profile *p = c->p;
	struct op_count *cnt;
	uint64_t all = 0;
	size_t i, k, used = 0;

	buf[0] = '\0';
	if (!ops || !ops->nrows || !(cnt = calloc(ops->nrows, sizeof(*cnt))))
		return;
	for (i = 0; i < ops->nrows; i++)
		cnt[i].row = (uint32_t)i;
	for (i = 0; i < n; i++) {
		const struct prof_gpu_op *g = &p->gpu_ops[sel[i]];
		uint64_t d = dur(g->start, g->end);
		uint32_t r = g->api < p->ncuda_api ? ops->api_op[g->api] : OPS_NONE;

		all += d;
		if (r == OPS_NONE)
			continue;
		cnt[r].n++;
		cnt[r].ns += d;
	}
	qsort(cnt, ops->nrows, sizeof(*cnt), cmp_op_count);
	for (k = 0; k < 3 && k < ops->nrows && cnt[k].n; k++) {
		int w = snprintf(buf + used, len - used, "%s%s (%.0f%%)",
				 k ? ", " : "; launched from ", ops->rows[cnt[k].row].name,
				 all ? 100.0 * (double)cnt[k].ns / (double)all : 0.0);

		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
	}
	free(cnt);
}

/* The GPU ops whose kernel name passes test (and, max_ns > 0, that ran
 * shorter than max_ns); *ns their GPU time, *names the first three distinct
 * display names.  Returns how many, or -ENOMEM (*sel is the caller's to
 * free). */
static long select_kernels(const struct cuda_rule_ctx *c, int (*test)(const char *),
			   uint64_t max_ns, uint32_t **sel, uint64_t *ns, char *names, size_t len)
{
	const struct profile *p = c->p;
	const char *seen[3] = { 0 };
	size_t i, n = 0, nseen = 0, used = 0;
	char lname[1024];

	*ns = 0;
	names[0] = '\0';
	if (!(*sel = util_reallocarray(NULL, p->ngpu_ops + 1, sizeof(**sel))))
		return -ENOMEM;
	for (i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *g = &p->gpu_ops[i];

		if (g->kind != PROF_GPU_KERNEL || !g->name)
			continue;
		if (max_ns && dur(g->start, g->end) >= max_ns)
			continue;
		lower(lname, sizeof(lname), g->name);
		if (!test(lname))
			continue;
		(*sel)[n++] = (uint32_t)i;
		*ns += dur(g->start, g->end);
		if (nseen < 3) {
			size_t k;
			int w;

			for (k = 0; k < nseen && strcmp(seen[k], g->name); k++)
				;
			if (k < nseen)
				continue;
			seen[nseen++] = g->name;
			w = snprintf(names + used, len - used, "%s%s", k ? ", " : "",
				     cuda_display_of(c->a, g->name));
			if (w > 0 && (size_t)w < len - used)
				used += (size_t)w;
		}
	}
	return (long)n;
}

static int channels_last(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_rule_ctx *c = ctx;
	const struct cuda_analysis *a = c->a;
	uint32_t *sel = NULL;
	uint64_t ns;
	char names[512], ops[512], b1[32];
	long n = select_kernels(c, is_layout_transpose, 0, &sel, &ns, names, sizeof(names));
	int ret = 0;

	if (n < 0)
		return (int)n;
	if (n && a->totals.kernel_ns &&
	    (double)ns >= CUDA_LAYOUT_SHARE * (double)a->totals.kernel_ns) {
		by_operator(c, sel, (size_t)n, ops, sizeof(ops));
		ret = rules_fire(pass,
				 "%ld NCHW<->NHWC layout transposes took %s = %.1f%% of kernel time "
				 "(%s)%s",
				 n, util_fmt_dur(b1, sizeof(b1), (double)ns),
				 100.0 * (double)ns / (double)a->totals.kernel_ns, names, ops);
	}
	free(sel);
	return ret;
}

/* The device a GPU op ran on, NULL unknown. */
static const struct prof_cuda_device *device_of(const struct profile *p,
						 const struct prof_gpu_op *g)
{
	size_t i;

	for (i = 0; i < p->ndevices; i++)
		if (p->devices[i].process == g->process && p->devices[i].id == g->device)
			return &p->devices[i];
	return NULL;
}

static int fp32_math(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_rule_ctx *c = ctx;
	const struct cuda_analysis *a = c->a;
	const struct prof_cuda_device *dev = NULL;
	uint32_t *sel = NULL;
	uint64_t ns, on_tc = 0;
	char names[512], ops[512], b1[32];
	long n = select_kernels(c, is_fp32_math, 0, &sel, &ns, names, sizeof(names)), i;
	int ret = 0;

	if (n < 0)
		return (int)n;
	/* only time on GPUs known to have tensor cores (compute capability 7.0
	 * and later; TF32 from 8.0) */
	for (i = 0; i < n; i++) {
		const struct prof_gpu_op *g = &c->p->gpu_ops[sel[i]];
		const struct prof_cuda_device *d = device_of(c->p, g);

		if (d && d->cc_major >= 7) {
			on_tc += dur(g->start, g->end);
			if (!dev)
				dev = d;
		}
	}
	if (dev && a->totals.kernel_ns &&
	    (double)on_tc >= CUDA_FP32_MATH_SHARE * (double)a->totals.kernel_ns) {
		by_operator(c, sel, (size_t)n, ops, sizeof(ops));
		ret = rules_fire(pass,
				 "fp32 GEMM/convolution kernels on CUDA cores took %s = %.1f%% of "
				 "kernel time on %s (compute capability %u.%u: tensor cores%s): "
				 "%s%s",
				 util_fmt_dur(b1, sizeof(b1), (double)on_tc),
				 100.0 * (double)on_tc / (double)a->totals.kernel_ns,
				 dev->name && *dev->name ? dev->name : "the GPU", dev->cc_major,
				 dev->cc_minor, dev->cc_major >= 8 ? ", TF32" : ", no TF32", names,
				 ops);
	}
	free(sel);
	return ret;
}

/* Iterations of the run: between cbn_step() markers on the thread with the
 * most of them; 1 without markers. */
static uint64_t run_steps(const struct profile *p)
{
	uint64_t best = 0;
	size_t i, j;

	for (i = 0; i < p->nthreads; i++) {
		uint64_t n = 0;

		for (j = 0; j < p->nranges; j++)
			n += p->ranges[j].kind == CBN_RANGE_STEP && p->ranges[j].thread == i;
		if (n > best)
			best = n;
	}
	return best > 1 ? best - 1 : 1;
}

static int fuse_elementwise(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_rule_ctx *c = ctx;
	uint32_t *sel = NULL;
	uint64_t ns, steps = run_steps(c->p);
	char names[512], ops[512], b1[32], b2[32];
	long n = select_kernels(c, is_elementwise, CUDA_FUSE_KERNEL_NS, &sel, &ns, names,
				sizeof(names));
	int ret = 0;

	if (n < 0)
		return (int)n;
	if (n >= CUDA_FUSE_MIN_TOTAL && (uint64_t)n / steps >= CUDA_FUSE_MIN_PER_STEP) {
		by_operator(c, sel, (size_t)n, ops, sizeof(ops));
		ret = rules_fire(pass,
				 "%ld elementwise kernels under %s (%.0f per step over %llu "
				 "step%s) took %s of GPU time (%s)%s",
				 n, util_fmt_dur(b2, sizeof(b2), CUDA_FUSE_KERNEL_NS), (double)n / steps,
				 (unsigned long long)steps, steps == 1 ? ", the whole run" : "s",
				 util_fmt_dur(b1, sizeof(b1), (double)ns), names, ops);
	}
	free(sel);
	return ret;
}

#define COLD_ITERATION_ADVICE                                                               \
	"The first iteration pays one-time costs (context creation, module loading, "      \
	"allocator growth, cuDNN/cuBLAS autotuning): warm up before timing, or exclude "   \
	"the first iteration from measurements; CUDA_MODULE_LOADING=EAGER moves lazy "     \
	"kernel loading to start-up."

/* The rules in report order; ids are public (docs/cuda.md lists them).  Rules
 * about single kernels, ranges or threads keep their first three findings. */
static const struct rule cuda_rules[] = {
	{ "overhead-bound", overhead_bound,
	  "The GPU mostly waits for the CPU to launch work: fuse small kernels, batch work into "
	  "fewer, larger launches, or capture the launch sequence in a CUDA graph "
	  "(cudaStreamBeginCapture/cudaGraphLaunch).", 1 },
	{ "sync-dominated", sync_dominated,
	  "The host spends much of the run waiting for the GPU: synchronize less often (no "
	  "cudaDeviceSynchronize per step), use events and cudaStreamWaitEvent to order streams, "
	  "and cudaMemcpyAsync from pinned memory so copies do not block.", 1 },
	{ "pageable-copies", pageable_copies,
	  "Pageable copies are staged through a driver buffer, run slower and cannot overlap "
	  "with kernels: allocate the host buffers with cudaHostAlloc or cudaMallocHost (or pin "
	  "them with cudaHostRegister) and use cudaMemcpyAsync.", 1 },
	{ "tiny-kernels", tiny_kernels,
	  "Each launch costs a few microseconds of CPU and GPU time: fuse small kernels (or let "
	  "a compiler such as torch.compile/XLA fuse them) and replay repeated launch sequences "
	  "as CUDA graphs.", 1 },
	{ "small-grid", small_grid,
	  "The grid has fewer blocks than the GPU has SMs, so some SMs stay idle: launch more, "
	  "smaller blocks, split the work further, or run independent kernels concurrently on "
	  "several streams.", 3 },
	{ "cold-start", cold_kernel,
	  "The first launch of this kernel pays one-time costs (lazy module loading, JIT, cache "
	  "warm-up): warm up before timing, or set CUDA_MODULE_LOADING=EAGER to load kernels at "
	  "start-up.", 3 },
	{ "cold-start", cold_range, COLD_ITERATION_ADVICE, 3 },
	{ "cold-start", cold_iteration, COLD_ITERATION_ADVICE, 3 },
	{ "variable-kernel", variable_kernel,
	  "Durations of this kernel vary widely: it may run with different input sizes (compare "
	  "launch configurations), contend with concurrent kernels or copies, or hit "
	  "data-dependent paths; look at its instances in a trace (--trace).", 3 },
	{ "implicit-dtod", implicit_dtod,
	  "Something copies device memory the code may not mean to copy (a library call, a "
	  "graph node, or a cudaMemcpy between devices without peer access): check the launch "
	  "sites, keep data on one device, and enable peer access (cudaDeviceEnablePeerAccess) "
	  "for intended cross-device copies.", 1 },
	{ "cuda-malloc-churn", malloc_churn,
	  "cudaMalloc and cudaFree are called again and again: each call goes to the driver and "
	  "may synchronize the device.  Allocate once and reuse the buffers, use a memory pool "
	  "(a caching allocator, as PyTorch's), or cudaMallocAsync/cudaFreeAsync, which serve "
	  "repeated sizes from the stream-ordered pool.", 1 },
	{ "pinned-memory", pinned_memory,
	  "Pinned (page-locked) host memory is scarce: the kernel can neither swap nor reclaim "
	  "it.  Pin only the staging buffers copies need, reuse them instead of allocating per "
	  "transfer, free them when done, and check cudaHostAlloc's result (fall back to "
	  "pageable memory when it fails).", 1 },
	{ "gpu-memory-full", gpu_memory_full,
	  "Device memory came close to full: the next larger batch or model fails with out of "
	  "memory.  Look at the peak's allocation sites (memory view), free or reuse buffers "
	  "before the peak, lower the batch size, or trade memory for compute (activation "
	  "checkpointing, lower precision).", 4 },
	{ "channels-last", channels_last,
	  "cuDNN transposes between NCHW and NHWC around its convolutions: keep tensors in the "
	  "layout it computes in.  In PyTorch convert the model and its inputs to channels_last "
	  "(model = model.to(memory_format=torch.channels_last), x = "
	  "x.to(memory_format=torch.channels_last)); elsewhere give cuDNN NHWC tensors.", 1 },
	{ "fp32-math", fp32_math,
	  "Matrix multiplies and convolutions run in full fp32 on the CUDA cores while the GPU "
	  "has tensor cores: allow TF32 (torch.backends.cuda.matmul.allow_tf32 = True or "
	  "torch.set_float32_matmul_precision('high'), and torch.backends.cudnn.allow_tf32 = "
	  "True; cublasSetMathMode(CUBLAS_TF32_TENSOR_OP_MATH) outside PyTorch) on compute "
	  "capability 8.0 and later, or train in mixed precision (torch.autocast with bfloat16 "
	  "or float16).", 1 },
	{ "fuse-elementwise", fuse_elementwise,
	  "Many tiny elementwise kernels: each costs a launch and a trip through GPU memory.  "
	  "Fuse them: torch.compile(model) lets Inductor fuse pointwise operations, fused or "
	  "foreach optimizers (torch.optim.AdamW(..., fused=True)) update all parameters in a "
	  "few kernels, and CUDA graphs (torch.compile(mode=\"reduce-overhead\")) cut the "
	  "launch cost of what remains.", 1 },
	{ "low-utilization", low_utilization,
	  "The GPU is idle more than half of the time between its first and last activity: look "
	  "at the largest gaps in a trace (--trace) and at the CPU table for what the host did "
	  "meanwhile, and overlap host work, copies and kernels with streams.", 1 },
};

int cuda_rules_build(struct cuda_analysis *a, const struct profile *p, const char **range_names,
		     uint64_t *scratch, const struct op_analysis *ops)
{
	const struct cuda_rule_ctx ctx = { .a = a, .p = p, .range_names = range_names,
					   .scratch = scratch, .ops = ops };
	struct rule_hit *hits;
	size_t nhits;
	int ret;

	ret = rules_run(cuda_rules, sizeof(cuda_rules) / sizeof(cuda_rules[0]), &ctx, &hits,
			&nhits);
	if (ret)
		return ret;
	return rules_keep(hits, nhits, &a->recos, &a->nrecos);
}
