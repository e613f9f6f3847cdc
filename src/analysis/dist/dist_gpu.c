/*
 * dist_gpu.c — the four-way split of a window's GPU time into computation,
 * overlapping and communication (the PyTorch Profiler's distributed view),
 * and which GPU ops are communication: NCCL's kernels by name, and any op
 * launched inside one of NCCL's own NVTX ranges.  docs/distributed.md
 * "Computation and communication (NCCL)" states the formula; keep them in step.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dist.h"
#include "util.h"

/* An NCCL NVTX range, keyed for the launch lookup: push/pop ranges belong to
 * their thread; start/end ranges (which may end on another thread) and ranges
 * of unknown thread to the whole process (thread PROF_NONE). */
struct dg_range {
	uint32_t process, thread;
	uint64_t s, e;
};

/* Skips an Itanium-mangled length-prefixed identifier's digits: returns its
 * length and moves *s past the digits, 0 when *s holds no digit. */
static size_t dg_mangled_len(const char **s)
{
	size_t n = 0;

	while (**s >= '0' && **s <= '9') {
		n = n * 10 + (size_t)(**s - '0');
		if (n > 4096)
			return 0;
		(*s)++;
	}
	return n;
}

static int dg_is_nccl(const char *s, size_t n)
{
	return n >= 4 && strncmp(s, "nccl", 4) == 0;
}

/* A mangled name (when the demangler gave up, or a test built it so):
 * _Z<len><name>... or _ZN<len><ns>...<len><name>E...; any component that
 * starts with nccl counts, as in the demangled form. */
static int dg_comm_mangled(const char *s)
{
	size_t n;
	int nested;

	s += 2;
	nested = *s == 'N';
	if (nested)
		s++;
	while (*s == 'K' || *s == 'V' || *s == 'r')   /* cv-qualifiers of a member */
		s++;
	for (;;) {
		n = dg_mangled_len(&s);
		if (!n || strnlen(s, n) < n)
			return 0;
		if (dg_is_nccl(s, n))
			return 1;
		s += n;
		if (!nested)
			return 0;
	}
}

int dist_is_comm_kernel(const char *name)
{
	const char *s = name, *c;

	if (!s)
		return 0;
	if (strncmp(s, "_Z", 2) == 0)
		return dg_comm_mangled(s);
	/* Demangled templates may carry their return type ("void ncclKernel<..>(..)"). */
	while (*s == ' ')
		s++;
	if (strncmp(s, "void ", 5) == 0)
		s += 5;
	/* The qualified name up to its template or parameter list: any of its
	 * components ("ns::ncclDevKernel_...") that starts with nccl.  Template
	 * arguments and parameters are not looked at: a compute kernel that
	 * takes an ncclComm stays compute. */
	for (c = s;; s++) {
		if (*s == ':' || *s == '(' || *s == '<' || *s == ' ' || *s == '\0') {
			if (dg_is_nccl(c, (size_t)(s - c)))
				return 1;
			if (*s != ':')
				return 0;
			while (*s == ':')
				s++;
			c = s;
			s--;
		}
	}
}

static int dg_cmp_range(const void *a, const void *b)
{
	const struct dg_range *x = a, *y = b;

	if (x->process != y->process)
		return x->process < y->process ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->s < y->s ? -1 : x->s > y->s;
}

/* The first of the sorted disjoint intervals v[0..n) that ends after t. */
static size_t dg_first_after(const struct util_ival *v, size_t n, uint64_t t)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (v[mid].e <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Length of the sorted disjoint intervals v[0..n) inside [t0, t1). */
static uint64_t dg_clipped(const struct util_ival *v, size_t n, uint64_t t0, uint64_t t1)
{
	uint64_t sum = 0;
	size_t i;

	for (i = dg_first_after(v, n, t0); i < n && v[i].s < t1; i++)
		sum += (v[i].e < t1 ? v[i].e : t1) - (v[i].s > t0 ? v[i].s : t0);
	return sum;
}

/* Length of the intersection of two sorted disjoint interval lists inside
 * [t0, t1). */
static uint64_t dg_intersect(const struct util_ival *a, size_t na, const struct util_ival *b, size_t nb,
			     uint64_t t0, uint64_t t1)
{
	size_t i = dg_first_after(a, na, t0), j = dg_first_after(b, nb, t0);
	uint64_t sum = 0;

	while (i < na && j < nb && a[i].s < t1 && b[j].s < t1) {
		uint64_t s = a[i].s > b[j].s ? a[i].s : b[j].s;
		uint64_t e = a[i].e < b[j].e ? a[i].e : b[j].e;

		if (s < t0)
			s = t0;
		if (e > t1)
			e = t1;
		if (e > s)
			sum += e - s;
		if (a[i].e < b[j].e)
			i++;
		else
			j++;
	}
	return sum;
}

/* Merges, in place, the ranges of each (process, thread) key into disjoint
 * ones, in key order, each key's through util_ival_union() in tmp (room for
 * n); returns how many remain. */
static size_t dg_range_union(struct dg_range *r, size_t n, struct util_ival *tmp)
{
	size_t i, j, k, q, m = 0;

	if (!n)
		return 0;
	qsort(r, n, sizeof(*r), dg_cmp_range);
	for (i = 0; i < n; i = j) {
		struct dg_range key = r[i];

		for (j = i; j < n && r[j].process == key.process && r[j].thread == key.thread; j++)
			tmp[j - i] = (struct util_ival){ r[j].s, r[j].e };
		k = util_ival_union(tmp, j - i, NULL);
		for (q = 0; q < k; q++)   /* m + q <= j: what it overwrites is in tmp */
			r[m++] = (struct dg_range){ key.process, key.thread, tmp[q].s, tmp[q].e };
	}
	return m;
}

/* 1 when ts lies in a merged range of key (process, thread). */
static int dg_in_range(const struct dg_range *r, size_t n, uint32_t process, uint32_t thread,
		       uint64_t ts)
{
	size_t lo = 0, hi = n, mid;
	const struct dg_range *x;

	/* the last range with key <= (process, thread) and start <= ts */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		x = &r[mid];
		if (x->process < process || (x->process == process && x->thread < thread) ||
		    (x->process == process && x->thread == thread && x->s <= ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	x = &r[lo - 1];
	return x->process == process && x->thread == thread && ts < x->e;
}

static int dg_masked(const uint8_t *mask, const struct profile *p, uint32_t proc)
{
	return proc < p->nprocesses && (!mask || mask[proc]);
}

/* NCCL's NVTX ranges (domain "NCCL", NCCL >= 2.19 with NVTX on) of the masked
 * processes, merged per key; *out NULL when there are none. */
static int dg_nccl_ranges(const struct profile *p, const uint8_t *mask, struct dg_range **out,
			  size_t *nout)
{
	struct dg_range *r;
	struct util_ival *tmp;
	size_t i, n = 0;

	*out = NULL;
	*nout = 0;
	for (i = 0; i < p->nranges; i++) {
		const struct prof_range *g = &p->ranges[i];

		if (g->domain && strcasecmp(g->domain, "NCCL") == 0 && g->end > g->start &&
		    dg_masked(mask, p, g->process))
			n++;
	}
	if (!n)
		return 0;
	r = malloc(n * sizeof(*r));
	tmp = malloc(n * sizeof(*tmp));
	if (!r || !tmp) {
		free(r);
		free(tmp);
		return -ENOMEM;
	}
	n = 0;
	for (i = 0; i < p->nranges; i++) {
		const struct prof_range *g = &p->ranges[i];

		if (!g->domain || strcasecmp(g->domain, "NCCL") != 0 || g->end <= g->start ||
		    !dg_masked(mask, p, g->process))
			continue;
		r[n].process = g->process;
		r[n].thread = g->kind == CBN_RANGE_PUSHPOP ? g->thread : PROF_NONE;
		r[n].s = g->start;
		r[n].e = g->end;
		n++;
	}
	*out = r;
	*nout = dg_range_union(r, n, tmp);
	free(tmp);
	return 0;
}

/* Communication: an NCCL kernel by name, or an op whose launching call
 * started inside an NCCL range of its thread (or of its process). */
static int dg_is_comm(const struct profile *p, const struct prof_gpu_op *g,
		      const struct dg_range *r, size_t nr)
{
	const struct prof_cuda_api *a;

	if (g->kind == PROF_GPU_KERNEL && dist_is_comm_kernel(g->name))
		return 1;
	if (!nr || g->api == PROF_NONE || g->api >= p->ncuda_api)
		return 0;
	a = &p->cuda_api[g->api];
	return (a->thread != PROF_NONE && dg_in_range(r, nr, a->process, a->thread, a->start)) ||
	       dg_in_range(r, nr, a->process, PROF_NONE, a->start);
}

int dist_gpu_split_many(const struct profile *p, const uint8_t *proc_mask, const uint64_t *t0,
			const uint64_t *t1, size_t nwin, struct dist_split *out)
{
	struct util_ival *iv = NULL;
	struct dg_range *r = NULL;
	size_t i, n = 0, ncomm = 0, ncomp = 0, nr = 0, mcomm = 0, mcomp = 0;
	int ret = 0;

	for (i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *g = &p->gpu_ops[i];

		if (g->end > g->start && dg_masked(proc_mask, p, g->process))
			n++;
	}
	if (!n) {
		for (i = 0; i < nwin; i++) {
			memset(&out[i], 0, sizeof(out[i]));
			out[i].wall_ns = t1[i] > t0[i] ? t1[i] - t0[i] : 0;
		}
		return 0;
	}
	ret = dg_nccl_ranges(p, proc_mask, &r, &nr);
	if (ret)
		goto out;
	iv = malloc(n * sizeof(*iv));
	if (!iv) {
		ret = -ENOMEM;
		goto out;
	}
	/* communication from the front of iv, computation from the back; each
	 * class merged once, then every window reads its part of the unions */
	for (i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *g = &p->gpu_ops[i];
		struct util_ival v = { g->start, g->end };

		if (g->end <= g->start || !dg_masked(proc_mask, p, g->process))
			continue;
		if (dg_is_comm(p, g, r, nr))
			iv[ncomm++] = v;
		else
			iv[n - ++ncomp] = v;
	}
	mcomm = util_ival_union(iv, ncomm, NULL);
	mcomp = util_ival_union(iv + ncomm, ncomp, NULL);
	for (i = 0; i < nwin; i++) {
		struct dist_split *o = &out[i];
		uint64_t comm, comp, both;

		memset(o, 0, sizeof(*o));
		if (t1[i] <= t0[i])
			continue;
		o->wall_ns = t1[i] - t0[i];
		comm = dg_clipped(iv, mcomm, t0[i], t1[i]);
		comp = dg_clipped(iv + ncomm, mcomp, t0[i], t1[i]);
		if (!comm && !comp)
			continue;
		both = dg_intersect(iv, mcomm, iv + ncomm, mcomp, t0[i], t1[i]);
		o->computation_ns = comp - both;
		o->overlap_ns = both;
		o->communication_ns = comm - both;
		/* comp + comm - both <= wall: both unions are clipped to the window */
		o->other_ns = o->wall_ns - (comp + comm - both);
		o->gpu = 1;
		ret++;
	}
out:
	free(iv);
	free(r);
	return ret;
}

int dist_gpu_split(const struct profile *p, const uint8_t *proc_mask, uint64_t t0, uint64_t t1,
		   struct dist_split *out)
{
	int ret = dist_gpu_split_many(p, proc_mask, &t0, &t1, 1, out);

	return ret < 0 ? ret : out->gpu;
}
