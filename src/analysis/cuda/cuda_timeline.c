/*
 * cuda_timeline.c — the overview from the GPU timeline: window, per-device
 * and overall utilization (union of kernel intervals), idle gaps, estimated
 * SM efficiency and achieved occupancy, CPU blocked in synchronization,
 * launch API time, and the verdict (docs/cuda.md, "Overview").
 */
#include <string.h>

#include "cuda_int.h"
#include "span.h"

struct span {
	uint64_t start, end;
	double value;
};

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Length of the union of the spans s[0 .. n), merged in iv (room for n). */
static uint64_t busy_of(const struct span *s, size_t n, struct util_ival *iv)
{
	uint64_t len;
	size_t i;

	for (i = 0; i < n; i++)
		iv[i] = (struct util_ival){ s[i].start, s[i].end };
	util_ival_union(iv, n, &len);
	return len;
}

/* The holes between the stretches v[0 .. n) (merged here), added to ov's. */
static void idle_gaps(struct cuda_overview *ov, struct util_ival *v, size_t n)
{
	size_t i, m = util_ival_union(v, n, NULL);

	for (i = 1; i < m; i++) {
		uint64_t g = v[i].s - v[i - 1].e;

		ov->idle_gaps_ns += g;
		ov->ngaps++;
		if (g > ov->largest_gap_ns)
			ov->largest_gap_ns = g;
	}
}

struct edge {
	uint64_t t;
	double dv;
};

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

/* ∫ min(Σ blocks/SM of running kernels, 1) dt over the spans. */
static double sm_efficiency_integral(const struct span *s, size_t n, struct edge *e)
{
	double level = 0, acc = 0;
	size_t i, ne = 0;

	for (i = 0; i < n; i++) {
		if (s[i].value < 0 || s[i].end <= s[i].start)
			continue;
		e[ne++] = (struct edge){ s[i].start, s[i].value };
		e[ne++] = (struct edge){ s[i].end, -s[i].value };
	}
	qsort(e, ne, sizeof(*e), cmp_edge);
	for (i = 0; i + 1 < ne; i++) {
		level += e[i].dv;
		if (level > 1e-12)
			acc += (level < 1.0 ? level : 1.0) * (double)(e[i + 1].t - e[i].t);
	}
	return acc;
}

static int cmp_corr(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The kernels' duration-weighted occupancy and their median duration (kd:
 * room for one per GPU operation). */
static void kernel_figures(struct cuda_overview *ov, const struct profile *p, const double *occ,
			   uint64_t *kd)
{
	double wo = 0, wod = 0;
	size_t i, nk = 0;

	for (i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *op = &p->gpu_ops[i];

		if (op->kind != PROF_GPU_KERNEL)
			continue;
		kd[nk++] = dur(op->start, op->end);
		if (occ[i] >= 0) {
			wo += occ[i] * (double)dur(op->start, op->end);
			wod += (double)dur(op->start, op->end);
		}
	}
	if (wod > 0)
		ov->est_achieved_occupancy = wo / wod;
	if (nk) {
		qsort(kd, nk, sizeof(*kd), cmp_u64);
		ov->median_kernel_ns = nk % 2 ? (double)kd[nk / 2] :
			((double)kd[nk / 2 - 1] + (double)kd[nk / 2]) / 2.0;
	}
}

/* Time blocked in synchronizing calls and the launch API time, into
 * a->ov and a->totals; -ENOMEM. */
static int sync_time(struct cuda_analysis *a, const struct profile *p, const struct cuda_nest *ns)
{
	struct cuda_overview *ov = &a->ov;
	uint64_t *corr;
	size_t i, ncorr = 0;

	corr = util_reallocarray(NULL, p->ncuda_api + 1, sizeof(*corr));
	if (!corr)
		return -ENOMEM;
	for (i = 0; i < p->ncuda_api; i++) {
		const struct prof_cuda_api *c = &p->cuda_api[i];
		const struct cuda_node *x = &ns->n[ns->api_node[i]];
		uint32_t up;
		int sync = cuda_api_is_sync(c->name), outer_api = 1, under_sync = 0;

		for (up = x->parent; up != CUDA_NO_IDX; up = ns->n[up].parent) {
			if (ns->n[up].type != CUDA_NODE_API)
				continue;
			outer_api = 0;
			if (cuda_api_is_sync(p->cuda_api[ns->n[up].idx].name))
				under_sync = 1;
		}
		if (sync) {
			corr[ncorr++] = ((uint64_t)c->process << 32) | c->correlation;
			if (!under_sync)
				ov->sync_blocked_ns += dur(c->start, c->end);
		} else if (outer_api) {
			uint64_t s = c->start > ov->window_start ? c->start : ov->window_start;
			uint64_t e = c->end < ov->window_end ? c->end : ov->window_end;

			ov->launch_api_ns += dur(s, e);
		}
	}
	qsort(corr, ncorr, sizeof(*corr), cmp_corr);
	for (i = 0; i < p->nsyncs; i++) {
		uint64_t key = ((uint64_t)p->syncs[i].process << 32) | p->syncs[i].correlation;

		if (!ncorr || !bsearch(&key, corr, ncorr, sizeof(*corr), cmp_corr))
			ov->sync_blocked_ns += dur(p->syncs[i].start, p->syncs[i].end);
	}
	a->totals.sync_ns = ov->sync_blocked_ns;
	a->totals.gpu_busy_ns = ov->gpu_busy_ns;
	free(corr);
	return 0;
}

/* The overview's verdict (docs/cuda.md, "Verdict"). */
static void timeline_verdict(struct cuda_analysis *a, const struct profile *p)
{
	struct cuda_overview *ov = &a->ov;

	if (!p->ngpu_ops || ov->gpu_utilization < 0) {
		ov->verdict = "idle";
	} else if (ov->gpu_utilization >= CUDA_VERDICT_COMPUTE_UTIL) {
		ov->verdict = "compute-bound";
	} else if (ov->gpu_utilization < CUDA_VERDICT_OVERHEAD_UTIL &&
		   ((ov->window_ns &&
		     (double)ov->launch_api_ns >= CUDA_OVERHEAD_API_FRACTION * (double)ov->window_ns) ||
		    (a->totals.kernels >= CUDA_OVERHEAD_MIN_KERNELS &&
		     ov->median_kernel_ns < CUDA_OVERHEAD_SHORT_KERNEL_NS))) {
		ov->verdict = "overhead-bound";
	} else {
		ov->verdict = "mixed";
	}
}

int cuda_timeline_build(struct cuda_analysis *a, const struct profile *p,
			const struct cuda_nest *ns, const double *bps, const double *occ)
{
	struct cuda_overview *ov = &a->ov;
	struct span *ks = NULL;
	struct util_ival *as = NULL;
	struct edge *edges = NULL;
	uint64_t *devs = NULL, *kd = NULL;
	size_t nd = 0, i, d;
	double busy_sum = 0, eff_sum = 0;
	int eff_known = 0, ret = -ENOMEM;

	memset(ov, 0, sizeof(*ov));
	ov->gpu_utilization = ov->est_sm_efficiency = ov->est_achieved_occupancy = -1;
	ov->window_start = UINT64_MAX;
	for (i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *op = &p->gpu_ops[i];

		if (op->start < ov->window_start)
			ov->window_start = op->start;
		if (op->end > ov->window_end)
			ov->window_end = op->end;
		ov->gpu_ns += dur(op->start, op->end);
	}
	if (!p->ngpu_ops)
		ov->window_start = 0;
	/* only what was recorded: capture windows leave gaps that are no idle GPU */
	ov->window_ns = span_between(p, ov->window_start, ov->window_end);

	/* CPU time: sampled, per process at its period (profile.h's one rule, so
	 * this agrees with the CPU table). */
	for (i = 0; i < p->nprocesses; i++)
		ov->cpu_ns += p->processes[i].weight * prof_period_of_process(p, (uint32_t)i);
	if (!ov->cpu_ns)
		for (i = 0; i < p->nthreads; i++)
			ov->cpu_ns += p->threads[i].cpu_ns;

	/* Per device: kernel union (utilization), all-activity gaps, SM sweep. */
	devs = util_reallocarray(NULL, p->ngpu_ops + 1, sizeof(*devs));
	ks = util_reallocarray(NULL, p->ngpu_ops + 1, sizeof(*ks));
	as = util_reallocarray(NULL, p->ngpu_ops + 1, sizeof(*as));
	edges = util_reallocarray(NULL, 2 * p->ngpu_ops + 2, sizeof(*edges));
	kd = util_reallocarray(NULL, p->ngpu_ops + 1, sizeof(*kd));
	if (!devs || !ks || !as || !edges || !kd)
		goto out;
	for (i = 0; i < p->ngpu_ops; i++)
		devs[i] = p->gpu_ops[i].device;
	qsort(devs, p->ngpu_ops, sizeof(*devs), cmp_u64);
	for (i = 0; i < p->ngpu_ops; i++)
		if (!nd || devs[nd - 1] != devs[i])
			devs[nd++] = devs[i];
	ov->ndevices = (uint32_t)nd;
	a->devices = calloc(nd + 1, sizeof(*a->devices));
	if (!a->devices)
		goto out;
	a->ndevices = nd;
	for (d = 0; d < nd; d++) {
		struct cuda_device_ov *dv;
		size_t nks = 0, nas = 0;
		uint64_t busy;
		double eff;
		int dev_known = 0;

		for (i = 0; i < p->ngpu_ops; i++) {
			const struct prof_gpu_op *op = &p->gpu_ops[i];
			struct span sp = { op->start, op->end > op->start ? op->end : op->start,
					   op->kind == PROF_GPU_KERNEL ? bps[i] : -1 };

			if (op->device != devs[d])
				continue;
			as[nas++] = (struct util_ival){ sp.start, sp.end };
			if (op->kind == PROF_GPU_KERNEL)
				ks[nks++] = sp;
		}
		qsort(ks, nks, sizeof(*ks), cmp_span);
		idle_gaps(ov, as, nas);
		busy = busy_of(ks, nks, as); /* as is free again */
		ov->gpu_busy_ns += busy;
		busy_sum += (double)busy;
		dv = &a->devices[d];
		dv->device = (uint32_t)devs[d];
		dv->busy_ns = busy;
		dv->utilization = ov->window_ns ? (double)busy / ov->window_ns : 0;
		dv->est_sm_efficiency = -1;
		for (i = 0; i < nks; i++)
			if (ks[i].value >= 0)
				eff_known = dev_known = 1;
		eff = sm_efficiency_integral(ks, nks, edges);
		eff_sum += eff;
		if (dev_known && ov->window_ns)
			dv->est_sm_efficiency = eff / ov->window_ns;
	}
	if (nd && ov->window_ns) {
		ov->gpu_utilization = busy_sum / ((double)ov->window_ns * nd);
		if (eff_known)
			ov->est_sm_efficiency = eff_sum / ((double)ov->window_ns * nd);
	} else if (nd) {
		ov->gpu_utilization = 0;
	}
	kernel_figures(ov, p, occ, kd);

	/* Time blocked in synchronizing calls: outermost sync-family API calls,
	 * plus synchronization records no such call accounts for. */
	if (sync_time(a, p, ns) < 0)
		goto out;
	timeline_verdict(a, p);
	ret = 0;
out:
	free(ks);
	free(as);
	free(edges);
	free(devs);
	free(kd);
	return ret;
}
