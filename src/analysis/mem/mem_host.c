/*
 * mem_host.c — the host spaces of the memory view: per process that recorded
 * host memory, its sites' bytes, leaks (and the steps they were born in),
 * peak (exact from the counters, or the replay's estimate), the sites live
 * at the peak, lifetimes and each site's heaviest stack.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cbn_weight.h"
#include "mem_int.h"
#include "span.h"
#include "util.h"


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
		qsort(t, n, sizeof(*t), util_u64_cmp);
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
	qsort(v, bestn, 2 * sizeof(*v), util_u64_cmp);
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

/* The weights and sites of process proc's allocation records. */
static int space_weigh(struct host_ctx *h, const struct replay *r, uint64_t rate)
{
	const struct profile *p = h->p;
	uint32_t *nn;
	double *nl;
	size_t i;

	for (i = r->a0; i < r->a1; i++) {
		const struct prof_mem_alloc *a = &p->mem_allocs[i];
		long s = mem_site_of(h, a->stack);

		if (s < 0)
			return -ENOMEM;
		h->asite[i] = (uint32_t)s;
		h->aw[i] = cbn_mem_weight_allocs(a->size, rate);
		h->m->sites[s].bytes += (double)a->size * h->aw[i];
		h->m->sites[s].allocs += h->aw[i];
		h->m->sites[s].records++;
	}
	if (!(nl = util_reallocarray(h->live, h->m->nsites + 1, sizeof(*nl))))
		return -ENOMEM;
	h->live = nl;
	if (!(nl = util_reallocarray(h->sure, h->m->nsites + 1, sizeof(*nl))))
		return -ENOMEM;
	h->sure = nl;
	if (!(nn = util_reallocarray(h->nunsure, h->m->nsites + 1, sizeof(*nn))))
		return -ENOMEM;
	h->nunsure = nn;
	return 0;
}

/* Leaks: the blocks still live at the end (after the replay), and in which
 * repeated steps they were born. */
static int space_leaks(struct host_ctx *h, const struct replay *r, uint32_t proc)
{
	const struct profile *p = h->p;
	const struct prof_process *pr = &p->processes[proc];
	uint64_t *steps = NULL;
	uint32_t *last_step = NULL;
	const char *arena;
	long nsteps;
	size_t i, k;
	int ret = 0;

	if ((nsteps = process_steps(p, proc, &steps)) < 0 ||
	    !(last_step = calloc(h->m->nsites, sizeof(*last_step)))) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = r->a0; i < r->a1; i++) {
		const struct prof_mem_alloc *a = &p->mem_allocs[i];
		uint32_t si = h->asite[i];
		struct mem_site *s = &h->m->sites[si];
		uint64_t span = pr->end > pr->start ? pr->end - pr->start : 0;

		if (r->dead[i])
			continue;
		s->live_end_bytes += (double)a->size * h->aw[i];
		s->live_end_blocks += h->aw[i];
		/* an arena or a GC heap keeps it until exit on purpose */
		if ((arena = mem_wrap_arena(p, h->wrap, a->stack))) {
			s->arena_end_bytes += (double)a->size * h->aw[i];
			if (!s->arena)
				s->arena = arena;
		}
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
out:
	free(steps);
	free(last_step);
	return ret;
}

/* The exact counters are exact to 64 KiB per thread: a peak that a few
 * more bytes set long after the live heap got there (zstd holds 244 MiB
 * from 34 ms on; a 4 KiB block at 19.5 s set the counter's maximum) was
 * reached when the heap first came that close.  The time of the peak is
 * that first time, so the curve, the peak and the sites live at it tell
 * one story. */
static void peak_first_reached(const struct profile *p, const struct replay *r, uint32_t proc,
			       struct mem_space *sp)
{
	double tol = (double)sp->peak * MEM_PEAK_SAME;
	size_t i, nthreads = 0;

	for (i = 0; i < p->nthreads; i++)
		nthreads += p->threads[i].process == proc;
	if (tol < (double)MEM_COUNTER_SLACK * (double)(nthreads ? nthreads : 1))
		tol = (double)MEM_COUNTER_SLACK * (double)(nthreads ? nthreads : 1);
	for (i = r->c0; i < r->c1; i++) {
		const struct prof_mem_counter *c = &p->mem_counters[i];

		if (c->ts >= sp->peak_ts)
			break;
		if (sp->windowed && !span_in_process(p, proc, c->ts, c->ts + 1))
			continue;
		if (c->host_live > 0 && (double)c->host_live + tol >= (double)sp->peak) {
			sp->peak_ts = c->ts;
			return;
		}
	}
}

/* The space's peak and curve: exact from the agent's counters when it kept
 * them, else the replay's estimate. */
static int space_peak(const struct profile *p, struct replay *r, uint32_t proc,
		      struct mem_space *sp)
{
	const struct prof_mem_proc *pm = &p->processes[proc].mem;
	size_t i;
	int ret;

	sp->rss_peak = pm->rss_peak;
	sp->address_peak = pm->reserved_peak;
	for (i = r->c0; i < r->c1; i++)
		if (p->mem_counters[i].rss > sp->rss_peak)
			sp->rss_peak = p->mem_counters[i].rss;
	if ((pm->flags & CBN_MEMF_USABLE) && (pm->host_peak || r->c1 > r->c0)) {
		/* exact counters: the header's peak, the curve from MEM_COUNTERS */
		int placed = 0;

		r->npts = 0;
		r->per = 1;
		r->inpool = 0;
		/* With capture windows the peak is the windows' (span.h): the
		 * counters read inside them; the header's covers the whole run. */
		sp->windowed = proc < p->nprocesses &&
			       p->processes[proc].capture.mode == CBN_CAPTURE_CONTROLLED;
		sp->peak = sp->windowed ? 0 : pm->host_peak;
		sp->peak_ts = sp->windowed ? 0 : pm->host_peak_ts;
		for (i = r->c0; i < r->c1; i++) {
			const struct prof_mem_counter *c = &p->mem_counters[i];

			if (sp->windowed && !span_in_process(p, proc, c->ts, c->ts + 1))
				continue;
			if (c->host_live > 0 && (uint64_t)c->host_live > sp->peak) {
				sp->peak = (uint64_t)c->host_live;
				sp->peak_ts = c->ts;
			}
		}
		peak_first_reached(p, r, proc, sp);
		for (i = r->c0; i < r->c1; i++) {
			const struct prof_mem_counter *c = &p->mem_counters[i];

			if (!placed && sp->peak_ts && sp->peak_ts < c->ts) {
				placed = 1;
				if ((ret = mem_push_point(r, sp->peak_ts, (double)sp->peak, c->rss)) < 0)
					return ret;
			}
			placed |= c->ts == sp->peak_ts;
			if ((ret = mem_push_point(r, c->ts, (double)c->host_live, c->rss)) < 0)
				return ret;
		}
		if (!placed && sp->peak_ts &&
		    (ret = mem_push_point(r, sp->peak_ts, (double)sp->peak, 0)) < 0)
			return ret;
		sp->peak_exact = 1;
		sp->live_end = pm->host_live_end;
		if (!sp->live_end && r->c1 > r->c0)
			sp->live_end = p->mem_counters[r->c1 - 1].host_live;
	} else {
		/* the replayed estimate (every block, in exact mode) */
		sp->peak = (uint64_t)(r->peak + 0.5);
		sp->peak_ts = r->peak_ts;
		sp->peak_exact = pm->rate <= 1 && !pm->lost && !pm->untracked;
		sp->live_end = (int64_t)(r->live_end + 0.5);
	}
	mem_timeline_reduce(r->pts, &r->npts);
	sp->timeline = r->pts;
	sp->ntimeline = r->npts;
	r->pts = NULL;
	sp->peak_range = range_at(p, proc, sp->peak_ts);
	return 0;
}

/* The sites live at the peak: a second replay, up to it. */
static int space_at_peak(struct host_ctx *h, struct replay *r, struct mem_space *sp)
{
	double sure = 0, unsure = 0, f = 1;
	size_t i, n = 0;
	int ret;

	if (!sp->peak_ts || r->a1 <= r->a0)
		return 0;
	r->stats = 0;
	r->snap_ts = sp->peak_ts;
	if (!(r->snap = calloc(h->m->nsites, sizeof(*r->snap))) ||
	    !(r->snap_sure = calloc(h->m->nsites, sizeof(*r->snap_sure))) ||
	    !(r->snap_n = calloc(h->m->nsites, sizeof(*r->snap_n))) ||
	    !(sp->at_peak = calloc(h->m->nsites - h->first_site, sizeof(*sp->at_peak))))
		return -ENOMEM;
	if ((ret = mem_replay_run(h, r)) < 0)
		return ret;
	for (i = h->first_site; i < h->m->nsites; i++) {
		sure += r->snap_sure[i] > 0 ? r->snap_sure[i] : 0;
		unsure += r->snap[i] > r->snap_sure[i] ? r->snap[i] - r->snap_sure[i] : 0;
	}
	/* Sampled shares of an exact peak: when their sum overshoots it
	 * (a Poisson count above its mean), scale the uncertain part down to
	 * it, so no site is shown holding more than the whole and a large
	 * block recorded for certain keeps its size.  An undershoot is left
	 * alone: blocks from before recording started have no record, and
	 * their bytes must not be handed to the sites that do. */
	if (sp->peak_exact && sure + unsure > (double)sp->peak && unsure > 0)
		f = sure < (double)sp->peak ? ((double)sp->peak - sure) / unsure : 0;
	for (i = h->first_site; i < h->m->nsites; i++) {
		double s = r->snap_sure[i] > 0 ? r->snap_sure[i] : 0;
		double v = s + (r->snap[i] > s ? (r->snap[i] - s) * f : 0);
		int known = !r->snap_n[i] || r->snap_n[i] >= MEM_EST_MIN_RECORDS || s >= 0.5 * v;

		if (sp->peak_exact && v > (double)sp->peak)
			v = (double)sp->peak;
		if (v < 0.5)
			continue;
		/* one sample's weight is no figure of a site: counted apart */
		if (!known) {
			sp->at_peak_other += v;
			sp->nat_peak_other++;
			continue;
		}
		sp->at_peak[n++] = (struct mem_peak_site){ (uint32_t)i, v };
	}
	qsort(sp->at_peak, n, sizeof(*sp->at_peak), peak_site_cmp);
	sp->nat_peak = n < MEM_PEAK_SITES_MAX ? n : MEM_PEAK_SITES_MAX;
	for (i = sp->nat_peak; i < n; i++) {
		sp->at_peak_rest += sp->at_peak[i].bytes;
		sp->nat_peak_rest++;
	}
	if (!sp->nat_peak) {
		free(sp->at_peak);
		sp->at_peak = NULL;
	}
	return 0;
}

/* No site's own peak above the whole's, and the same scaling for what was
 * live at the end, against the exact counter.  Only with one host process:
 * sites are shared by processes, and their figures summed. */
static void space_scale(struct host_ctx *h, const struct mem_space *sp)
{
	const struct profile *p = h->p;
	size_t i;

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
}

/* One host space: replay process proc, fill space sp. */
static int host_space(struct host_ctx *h, uint32_t proc, struct mem_space *sp)
{
	const struct profile *p = h->p;
	const struct prof_mem_proc *pm = &p->processes[proc].mem;
	struct replay r = { 0 };
	int ret;

	PROC_RANGE(p->mem_allocs, p->nmem_allocs, proc, r.a0, r.a1);
	PROC_RANGE(p->mem_frees, p->nmem_frees, proc, r.f0, r.f1);
	PROC_RANGE(p->mem_counters, p->nmem_counters, proc, r.c0, r.c1);
	r.dead = h->dead;
	if ((ret = space_weigh(h, &r, pm->rate)) < 0)
		goto out;

	sp->kind = MEM_SPACE_HOST;
	sp->process = proc;
	sp->device = 0;
	sp->peak_range = PROF_NONE;
	r.stats = 1;
	if ((ret = mem_replay_pair(p, &r)) < 0)
		goto out;
	r.per = ((r.a1 - r.a0) + r.ndeaths + (r.c1 - r.c0)) / MEM_TIMELINE_MAX + 1;
	if ((ret = mem_replay_run(h, &r)) < 0 || (ret = space_leaks(h, &r, proc)) < 0 ||
	    (ret = space_peak(p, &r, proc, sp)) < 0 || (ret = space_at_peak(h, &r, sp)) < 0)
		goto out;
	space_scale(h, sp);

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
	free(r.snap_sure);
	free(r.snap_n);
	free(r.deaths);
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
int mem_host_analyze(const struct profile *p, struct mem_analysis *m, const char *const *fns,
		     size_t nfns)
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
	    !(h.live = calloc(1, sizeof(*h.live))) || !(h.sure = calloc(1, sizeof(*h.sure))) ||
	    !(h.nunsure = calloc(1, sizeof(*h.nunsure)))) {
		ret = -ENOMEM;
		goto out;
	}
	memset(h.stack_site, 0xff, (p->nstacks ? p->nstacks : 1) * sizeof(*h.stack_site));
	if ((ret = mem_wrap_find(p, fns, nfns, &h.wrap)) < 0)
		goto out;
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
	free(h.wrap);
	free(h.live);
	free(h.sure);
	free(h.nunsure);
	free(h.lives);
	return ret;
}

