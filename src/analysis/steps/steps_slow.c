/*
 * steps_slow.c — what the steps view says of the steps once they have their
 * figures: the distribution of durations, the slowest steps with the
 * functions and kernels that grew in them against the median step, and the
 * cold-start rule.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "steps_int.h"
#include "util.h"

/* --- distribution, slow steps, cold start ------------------------------------------ */

/* Median of v[0 .. n) (sorted here): the middle one, or the mean of the two. */
static uint64_t median_u64(uint64_t *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), util_u64_cmp);
	return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

static uint64_t dur(const struct step *s)
{
	return s->end - s->start;
}

int steps_distribution(struct step_analysis *a)
{
	uint64_t *d = util_reallocarray(NULL, a->nsteps, sizeof(*d));
	size_t i, rank;

	if (!d)
		return -ENOMEM;
	for (i = 0; i < a->nsteps; i++) {
		d[i] = dur(&a->steps[i]);
		a->total_ns += d[i];
	}
	a->median_ns = median_u64(d, a->nsteps);
	a->min_ns = d[0];
	a->max_ns = d[a->nsteps - 1];
	rank = (a->nsteps * 9 + 9) / 10; /* nearest rank: ceil(0.9 n) */
	a->p90_ns = d[rank - 1];
	a->mean_ns = a->total_ns / a->nsteps;
	free(d);
	return 0;
}

/* Self time of each candidate (functions cand[0 .. nc)) in step s. */
static void func_self(const struct profile *p, const struct sample_index *x, const struct step *s,
		      const uint32_t *slot, uint64_t *out)
{
	size_t j = steps_sidx_lower(x, s->process, s->start);

	for (; j < x->n && steps_sample_proc(p, x->idx[j]) == s->process; j++) {
		const struct prof_sample *sm = &p->samples[x->idx[j]];
		uint32_t f;

		if (sm->ts >= s->end)
			break;
		if (sm->stack >= p->nstacks || !p->stacks[sm->stack].nframes ||
		    p->stacks[sm->stack].first >= p->nframes)
			continue;
		f = p->frames[p->stacks[sm->stack].first].func;
		if (f < p->nfuncs && slot[f] != UINT32_MAX)
			out[slot[f]] += (uint64_t)sm->weight * prof_period_of_thread(p, sm->thread);
	}
}

struct cand {
	const char *name;
	uint32_t func;       /* UINT32_MAX for a kernel */
	uint64_t here;       /* time in the slow step */
	uint64_t median;
};

static int cand_here_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return x->here > y->here ? -1 : x->here < y->here;
}

static int cand_grow_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	uint64_t gx = x->here - x->median, gy = y->here - y->median;

	return gx > gy ? -1 : gx < gy;
}

/* Kernel time by name in step s, for the candidates' names. */
static void kernel_time(const struct profile *p, const struct step_ix *ix, const struct step *s,
			struct cand *c, size_t nc, uint64_t *out)
{
	size_t k;

	TINDEX_EACH(&ix->gpu, s, e) {
		const struct prof_gpu_op *g = &p->gpu_ops[ix->gpu.v[e].i];

		if (g->kind != PROF_GPU_KERNEL || g->start < s->start || !g->name)
			continue;
		for (k = 0; k < nc; k++)
			if (c[k].func == UINT32_MAX && !strcmp(c[k].name, g->name)) {
				out[k] += g->end > g->start ? g->end - g->start : 0;
				break;
			}
	}
}

/* What grew in slow step sl: its top functions (self) and kernels, each
 * against its median per step over all steps; the largest growths kept. */
static int slow_growth(const struct profile *p, const struct sample_index *x,
		       const struct step_ix *ix, const struct step_analysis *a, struct step_slow *sl)
{
	const struct step *s = &a->steps[sl->step];
	struct cand *c = NULL;
	uint32_t *slot = NULL;
	uint64_t *here = NULL, *col = NULL, *per = NULL;
	size_t nc = 0, nfc, i, k;
	uint64_t thr, share;
	int ret = -ENOMEM;

	if (!(slot = malloc((p->nfuncs ? p->nfuncs : 1) * sizeof(*slot))) ||
	    !(here = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*here))) ||
	    !(c = calloc(2 * STEP_CAND_MAX, sizeof(*c))))
		goto out;
	/* every function's self time in the slow step */
	for (i = 0; i < p->nfuncs; i++)
		slot[i] = (uint32_t)i;
	func_self(p, x, s, slot, here);
	for (i = 0; i < p->nfuncs; i++) {
		if (!here[i])
			continue;
		if (nc < STEP_CAND_MAX) {
			c[nc++] = (struct cand){p->funcs[i].name, (uint32_t)i, here[i], 0};
			qsort(c, nc, sizeof(*c), cand_here_cmp);
		} else if (here[i] > c[nc - 1].here) {
			c[nc - 1] = (struct cand){p->funcs[i].name, (uint32_t)i, here[i], 0};
			qsort(c, nc, sizeof(*c), cand_here_cmp);
		}
	}
	nfc = nc;
	/* its kernels, by name */
	TINDEX_EACH(&ix->gpu, s, e) {
		const struct prof_gpu_op *g = &p->gpu_ops[ix->gpu.v[e].i];
		size_t j;

		if (g->kind != PROF_GPU_KERNEL || g->start < s->start || !g->name)
			continue;
		for (j = nfc; j < nc && strcmp(c[j].name, g->name); j++)
			;
		if (j == nc) {
			if (nc == nfc + STEP_CAND_MAX)
				continue;
			c[nc++] = (struct cand){g->name, UINT32_MAX, 0, 0};
		}
		c[j].here += g->end > g->start ? g->end - g->start : 0;
	}
	/* each candidate's time per step, then its median */
	if (!(col = calloc(a->nsteps * (nc ? nc : 1), sizeof(*col))) ||
	    !(per = calloc(a->nsteps ? a->nsteps : 1, sizeof(*per))))
		goto out;
	for (i = 0; i < p->nfuncs; i++)
		slot[i] = UINT32_MAX;
	for (k = 0; k < nfc; k++)
		slot[c[k].func] = (uint32_t)k;
	for (i = 0; i < a->nsteps; i++) {
		func_self(p, x, &a->steps[i], slot, col + i * nc);
		kernel_time(p, ix, &a->steps[i], c, nc, col + i * nc);
	}
	for (k = 0; k < nc; k++) {
		for (i = 0; i < a->nsteps; i++)
			per[i] = col[i * nc + k];
		c[k].median = median_u64(per, a->nsteps);
	}
	/* keep the growths */
	for (i = k = 0; i < nc; i++)
		if (c[i].here > c[i].median)
			c[k++] = c[i];
	qsort(c, k, sizeof(*c), cand_grow_cmp);
	/* Growths of a sample or two, or tiny next to the main one, are
	 * noise: they would bury what differed.  Kernels are timed exactly. */
	share = k ? (uint64_t)((double)(c[0].here - c[0].median) * STEP_GROW_MIN_SHARE) : 0;
	thr = STEP_GROW_MIN_PERIODS * prof_period_of_process(p, s->process);
	if (thr < share)
		thr = share;
	for (i = 0; i < k && sl->ngrew < STEP_GROWTH_MAX; i++)
		if (c[i].here - c[i].median >= (c[i].func == UINT32_MAX ? share : thr))
			sl->grew[sl->ngrew++] = (struct step_growth){
				c[i].name, c[i].func == UINT32_MAX, c[i].here, c[i].median};
	ret = 0;
out:
	free(c);
	free(slot);
	free(here);
	free(col);
	free(per);
	return ret;
}

static int slow_cmp(const void *a, const void *b)
{
	const struct step_slow *x = a, *y = b;

	return x->ratio > y->ratio ? -1 : x->ratio < y->ratio;
}

int steps_slow(const struct profile *p, const struct sample_index *x,
	       const struct step_ix *ix, struct step_analysis *a)
{
	size_t i, n = 0;

	if (!a->median_ns)
		return 0;
	if (!(a->slow = calloc(a->nsteps, sizeof(*a->slow))))
		return -ENOMEM;
	for (i = 0; i < a->nsteps; i++) {
		double r = (double)dur(&a->steps[i]) / (double)a->median_ns;

		if (r > STEP_SLOW_RATIO)
			a->slow[n++] = (struct step_slow){.step = i, .ratio = r};
	}
	qsort(a->slow, n, sizeof(*a->slow), slow_cmp);
	a->nslow = n < STEP_SLOW_MAX ? n : STEP_SLOW_MAX;
	for (i = 0; i < a->nslow; i++)
		if (slow_growth(p, x, ix, a, &a->slow[i]) < 0)
			return -ENOMEM;
	return 0;
}


static int rule_cold_start(const void *ctx, struct rules_pass *pass)
{
	const struct step_analysis *a = ctx;
	char t1[32], t2[32];

	if (!a->cold)
		return 0;
	return rules_fire(pass, "step %" PRIu64 " took %s, %.1fx the median of the other %zu steps (%s)",
			  a->steps[0].number, util_fmt_dur(t1, sizeof(t1), (double)dur(&a->steps[0])),
			  a->cold_ratio, a->nsteps - 1,
			  util_fmt_dur(t2, sizeof(t2), (double)dur(&a->steps[0]) / a->cold_ratio));
}

static const struct rule step_rules[] = {
	{"cold-start", rule_cold_start,
	 "the first step is much slower than the others (allocation, lazy loading, JIT, cold "
	 "caches): leave it out of measurements (--schedule wait=2,warmup=1,active=N) or warm up "
	 "before the loop; optimize it only if start-up time matters",
	 1},
};

int steps_cold_start(struct step_analysis *a)
{
	uint64_t *d = util_reallocarray(NULL, a->nsteps - 1, sizeof(*d)), m;
	struct rule_hit *hits;
	size_t i, nhits;
	int ret;

	if (!d)
		return -ENOMEM;
	for (i = 1; i < a->nsteps; i++)
		d[i - 1] = dur(&a->steps[i]);
	m = median_u64(d, a->nsteps - 1);
	free(d);
	if (m && (double)dur(&a->steps[0]) > STEP_COLD_RATIO * (double)m) {
		a->cold = 1;
		a->cold_ratio = (double)dur(&a->steps[0]) / (double)m;
	}
	if ((ret = rules_run(step_rules, sizeof(step_rules) / sizeof(step_rules[0]), a, &hits,
			     &nhits)) < 0)
		return ret;
	return rules_keep(hits, nhits, &a->findings, &a->nfindings);
}

