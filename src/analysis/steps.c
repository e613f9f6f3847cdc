/*
 * steps.c — the steps view (steps.h): finds the run's steps (markers, ranges
 * or a function on the samples), keeps those inside the capture windows, and
 * gives each its CPU, GPU, sync and memory figures; then the distribution of
 * durations, the slowest steps with what grew in them, and the cold-start rule.
 */
#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "steps.h"
#include "util.h"

#define STEP_SLOW_RATIO 1.5      /* a slow step: duration above this x the median */
#define STEP_SLOW_MAX 5          /* slow steps kept */
#define STEP_COLD_RATIO 2.0      /* cold start: first step above this x the others' median */
#define STEP_GROW_MIN_PERIODS 3  /* a function's growth shown: at least 3 sampling periods */
#define STEP_GROW_MIN_SHARE 0.1  /* ... and a tenth of the largest growth in the step */
#define STEP_CAND_MAX 16         /* functions/kernels of a slow step compared with the median */
/* A marker that opens a window (--schedule) is taken a little before the
 * window's OPEN record is written (the agent reads the clock, then decides):
 * it still belongs to that window. */
#define STEP_EDGE_SLACK_NS 1000000ull

/* --- windows ---------------------------------------------------------------- */

#define WIN_NONE (-1L)           /* outside every window: not recorded */
#define WIN_WHOLE (-2L)          /* a run without controls and without windows: all of it */

/* The window of process proc holding ts (with the slack before its start):
 * its index in p->windows, WIN_WHOLE or WIN_NONE.  A process without windows
 * whose run had no controls (profiles built by hand) is one window. */
static long window_at(const struct profile *p, uint32_t proc, uint64_t ts)
{
	size_t lo = 0, hi = p->nwindows, c;
	int any = 0;

	/* p->windows is by (process, start): the last one starting by ts + slack */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct prof_window *w = &p->windows[mid];

		if (w->process < proc || (w->process == proc && w->start <= ts + STEP_EDGE_SLACK_NS))
			lo = mid + 1;
		else
			hi = mid;
	}
	any = lo < p->nwindows && p->windows[lo].process == proc;
	if (lo > 0 && p->windows[lo - 1].process == proc) {
		c = lo - 1;
		/* inside the one before, the slack reaching the next one's start */
		if (ts < p->windows[c].start && c > 0 && p->windows[c - 1].process == proc &&
		    ts <= p->windows[c - 1].end)
			return (long)(c - 1);
		if (ts <= p->windows[c].end)
			return (long)c;
		any = 1;
	}
	if (any || (proc < p->nprocesses && p->processes[proc].capture.mode != CBN_CAPTURE_ALL))
		return WIN_NONE;
	return WIN_WHOLE;
}

/* The number of the step that window w's first marker starts: the n-th
 * cbn_step() call starts step n (ProfilerStep#n, cbn_schedule.h).  A window
 * the schedule opened opens at that marker, already counted in first_step;
 * any other window opened in the step before its first marker. */
static uint64_t window_first(const struct profile *p, long w)
{
	if (w < 0)
		return 1;
	return p->windows[w].first_step + (p->windows[w].open_cause != CBN_CAUSE_SCHEDULE);
}

static uint64_t window_end(const struct profile *p, long w)
{
	return w >= 0 ? p->windows[w].end : UINT64_MAX;
}

/* --- building the list ---------------------------------------------------------- */

struct step_list {
	struct step *v;
	size_t n, cap;
};

static int step_add(struct step_list *l, uint32_t proc, uint64_t number, uint64_t start,
		    uint64_t end)
{
	struct step *s;

	if (util_grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v)) < 0)
		return -ENOMEM;
	s = &l->v[l->n++];
	memset(s, 0, sizeof(*s));
	s->process = proc;
	s->number = number;
	s->start = start;
	s->end = end;
	return 0;
}

/* Samples by (process, ts), as indices into p->samples: every per-step sum
 * is a binary search and a short walk. */
struct sample_index {
	const struct profile *p;
	uint32_t *idx;
	size_t n;
};

static int sidx_cmp(const void *a, const void *b, void *ctx)
{
	const struct profile *p = ctx;
	const struct prof_sample *x = &p->samples[*(const uint32_t *)a];
	const struct prof_sample *y = &p->samples[*(const uint32_t *)b];
	uint32_t px = x->thread < p->nthreads ? p->threads[x->thread].process : UINT32_MAX;
	uint32_t py = y->thread < p->nthreads ? p->threads[y->thread].process : UINT32_MAX;

	if (px != py)
		return px < py ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static uint32_t sample_proc(const struct profile *p, uint32_t si)
{
	uint32_t t = p->samples[si].thread;

	return t < p->nthreads ? p->threads[t].process : UINT32_MAX;
}

/* First position in the index with (process, ts) >= (proc, ts). */
static size_t sidx_lower(const struct sample_index *x, uint32_t proc, uint64_t ts)
{
	size_t lo = 0, hi = x->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		uint32_t pm = sample_proc(x->p, x->idx[mid]);

		if (pm < proc || (pm == proc && x->p->samples[x->idx[mid]].ts < ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int sidx_build(const struct profile *p, struct sample_index *x)
{
	size_t i;

	x->p = p;
	x->n = p->nsamples;
	x->idx = NULL;
	if (!x->n)
		return 0;
	if (!(x->idx = util_reallocarray(NULL, x->n, sizeof(*x->idx))))
		return -ENOMEM;
	for (i = 0; i < x->n; i++)
		x->idx[i] = (uint32_t)i;
	qsort_r(x->idx, x->n, sizeof(*x->idx), sidx_cmp, (void *)p);
	return 0;
}

/* 1 when process proc has a sample in [start, end). */
static int has_samples(const struct sample_index *x, uint32_t proc, uint64_t start, uint64_t end)
{
	size_t k = sidx_lower(x, proc, start);

	return k < x->n && sample_proc(x->p, x->idx[k]) == proc &&
	       x->p->samples[x->idx[k]].ts < end;
}

static int range_is_step(const struct prof_range *r, int kind_mark)
{
	if (kind_mark)
		return r->kind == CBN_RANGE_MARK;
	return r->kind == CBN_RANGE_PUSHPOP || r->kind == CBN_RANGE_STARTEND;
}

struct marker {               /* a step marker: cbn_step(), or a mark matching --step */
	uint64_t ts;
	uint32_t process;
};

static int marker_cmp(const void *a, const void *b)
{
	const struct marker *x = a, *y = b;

	if (x->process != y->process)
		return x->process < y->process ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/*
 * Marker steps: from each marker to the next inside one window, numbered by
 * the markers before them (window_first); the
 * last marker of a window to the window's end (at most its process's end)
 * when that stretch has samples.  re NULL: cbn_step() markers; else the marks
 * whose name matches re.
 */
static int steps_from_markers(const struct profile *p, const regex_t *re,
			      const struct sample_index *x, struct step_list *l)
{
	struct marker *m = NULL;
	size_t n = 0, cap = 0, i, j;
	int ret = 0;

	for (i = 0; i < p->nranges; i++) {
		const struct prof_range *r = &p->ranges[i];

		if (re ? !range_is_step(r, 1) || !r->name || regexec(re, r->name, 0, NULL, 0) :
			 r->kind != CBN_RANGE_STEP)
			continue;
		if (util_grow((void **)&m, &cap, n, sizeof(*m)) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		m[n].ts = r->start;
		m[n++].process = r->process;
	}
	if (n > 1)
		qsort(m, n, sizeof(*m), marker_cmp);
	for (i = 0; i < n; i = j) {
		long w = window_at(p, m[i].process, m[i].ts);
		uint64_t k, end;

		/* the markers of this window */
		for (j = i + 1; j < n && m[j].process == m[i].process &&
				window_at(p, m[j].process, m[j].ts) == w;
		     j++)
			;
		if (w == WIN_NONE)
			continue;
		for (k = 0; i + k + 1 < j; k++)
			if ((ret = step_add(l, m[i].process, window_first(p, w) + k, m[i + k].ts,
					    m[i + k + 1].ts)) < 0)
				goto out;
		end = window_end(p, w);
		if (m[i].process < p->nprocesses && p->processes[m[i].process].end &&
		    p->processes[m[i].process].end < end)
			end = p->processes[m[i].process].end;
		/* A window the schedule closed ends at the marker of a step it does
		 * not record: nothing after that marker is a step. */
		if (w >= 0 && p->windows[w].close_cause == CBN_CAUSE_SCHEDULE)
			continue;
		if (end != UINT64_MAX && end > m[j - 1].ts &&
		    has_samples(x, m[i].process, m[j - 1].ts, end) &&
		    (ret = step_add(l, m[i].process, window_first(p, w) + k, m[j - 1].ts, end)) < 0)
			goto out;
	}
out:
	free(m);
	return ret;
}

static int rangeidx_cmp(const void *a, const void *b, void *ctx)
{
	const struct profile *p = ctx;
	const struct prof_range *x = &p->ranges[*(const size_t *)a];
	const struct prof_range *y = &p->ranges[*(const size_t *)b];

	if (x->process != y->process)
		return x->process < y->process ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end; /* the outer one first */
}

/* Range steps: each range matching re, outermost only, inside a window;
 * numbered in order per process. */
static int steps_from_ranges(const struct profile *p, const regex_t *re, struct step_list *l)
{
	size_t *m = NULL, n = 0, cap = 0, i;
	uint64_t number = 0, last_end = 0;
	uint32_t proc = UINT32_MAX;
	int ret = 0;

	for (i = 0; i < p->nranges; i++) {
		const struct prof_range *r = &p->ranges[i];

		if (!range_is_step(r, 0) || r->end < r->start || !r->name ||
		    regexec(re, r->name, 0, NULL, 0))
			continue;
		if (util_grow((void **)&m, &cap, n, sizeof(*m)) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		m[n++] = i;
	}
	if (n > 1)
		qsort_r(m, n, sizeof(*m), rangeidx_cmp, (void *)p);
	for (i = 0; i < n; i++) {
		const struct prof_range *r = &p->ranges[m[i]];
		long w = window_at(p, r->process, r->start);

		if (r->process != proc) {
			proc = r->process;
			number = 0;
			last_end = 0;
		}
		if (r->start < last_end)
			continue; /* nested in the previous one */
		last_end = r->end;
		if (w == WIN_NONE || r->end > window_end(p, w))
			continue; /* begun or ended outside the recording */
		if ((ret = step_add(l, r->process, number++, r->start, r->end)) < 0)
			goto out;
	}
out:
	free(m);
	return ret;
}

/* --- --step-func ---------------------------------------------------------------- */

static int ts_cmp(const void *a, const void *b, void *ctx)
{
	const struct profile *p = ctx;
	uint64_t x = p->samples[*(const uint32_t *)a].ts, y = p->samples[*(const uint32_t *)b].ts;

	if (x != y)
		return x < y ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/*
 * Each maximal run of the thread's samples whose stack holds the function,
 * from the first such sample to the first without it (or the thread's last
 * sample), not across a window's edge.
 */
static int steps_from_func(const struct profile *p, const char *name, struct step_list *l,
			   uint32_t *thread_out)
{
	unsigned char *fmatch = NULL, *smatch = NULL;
	uint64_t *tw = NULL;
	uint32_t *ts = NULL, best = UINT32_MAX;
	size_t i, n = 0, any = 0;
	int ret = 0;

	if (!p->nsamples || !p->nthreads)
		return 0;
	fmatch = calloc(p->nfuncs ? p->nfuncs : 1, 1);
	smatch = calloc(p->nstacks ? p->nstacks : 1, 1);
	tw = calloc(p->nthreads, sizeof(*tw));
	if (!fmatch || !smatch || !tw) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < p->nfuncs; i++)
		if (p->funcs[i].name && !strcmp(p->funcs[i].name, name))
			fmatch[i] = any = 1;
	if (!any)
		goto out;
	for (i = 0; i < p->nstacks; i++) {
		const struct prof_stack *st = &p->stacks[i];
		uint32_t f;

		for (f = 0; f < st->nframes && st->first + f < p->nframes; f++)
			if (p->frames[st->first + f].func < p->nfuncs &&
			    fmatch[p->frames[st->first + f].func]) {
				smatch[i] = 1;
				break;
			}
	}
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];

		if (s->stack < p->nstacks && smatch[s->stack] && s->thread < p->nthreads)
			tw[s->thread] += s->weight;
	}
	for (i = 0; i < p->nthreads; i++)
		if (tw[i] && (best == UINT32_MAX || tw[i] > tw[best]))
			best = (uint32_t)i;
	if (best == UINT32_MAX)
		goto out;
	*thread_out = best;
	if (!(ts = util_reallocarray(NULL, p->nsamples, sizeof(*ts)))) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < p->nsamples; i++)
		if (p->samples[i].thread == best && !(p->samples[i].flags & PROF_SAMPLE_SPLIT))
			ts[n++] = (uint32_t)i;
	qsort_r(ts, n, sizeof(*ts), ts_cmp, (void *)p);
	{
		uint32_t proc = p->threads[best].process;
		uint64_t number = 0, start = 0;
		long w = WIN_NONE, wr = WIN_NONE;
		int in = 0;

		for (i = 0; i <= n; i++) {
			const struct prof_sample *s = i < n ? &p->samples[ts[i]] : NULL;
			int match = s && s->stack < p->nstacks && smatch[s->stack];

			w = s ? window_at(p, proc, s->ts) : WIN_NONE;
			if (in && (!match || w != wr)) {
				/* the run ends at this sample; at its last one when the
				 * thread or the window ends inside the function */
				uint64_t end = s && w == wr ? s->ts : p->samples[ts[i - 1]].ts;

				if (end > start && (ret = step_add(l, proc, number++, start, end)) < 0)
					goto out;
				in = 0;
			}
			if (match && !in && w != WIN_NONE) {
				in = 1;
				start = s->ts;
				wr = w;
			}
		}
	}
out:
	free(fmatch);
	free(smatch);
	free(tw);
	free(ts);
	return ret;
}

/* --- per-step figures ------------------------------------------------------------ */

struct ival {
	uint64_t s, e;
};

static int ival_cmp(const void *a, const void *b)
{
	const struct ival *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

/* Total length of the union of v[0 .. n) (sorted here). */
static uint64_t ival_union(struct ival *v, size_t n)
{
	uint64_t total = 0, cs = 0, ce = 0;
	size_t i;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), ival_cmp);
	cs = v[0].s;
	ce = v[0].e;
	for (i = 1; i < n; i++) {
		if (v[i].s > ce) {
			total += ce - cs;
			cs = v[i].s;
			ce = v[i].e;
		} else if (v[i].e > ce) {
			ce = v[i].e;
		}
	}
	return total + (ce - cs);
}

static uint64_t clip(uint64_t s, uint64_t e, uint64_t lo, uint64_t hi)
{
	if (s < lo)
		s = lo;
	if (e > hi)
		e = hi;
	return e > s ? e - s : 0;
}

static int is_sync_api(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	return n >= 11 && !strcmp(name + n - 11, "Synchronize");
}

/* Intervals of one kind (GPU ops, syncs, counters) by (process, start), so a
 * step finds its own with a binary search: those starting up to the longest
 * interval before it. */
struct tindex {
	struct tent {
		uint32_t process;
		uint32_t i;              /* index into the profile's array */
		uint64_t s, e;
	} *v;
	size_t n, cap;
	uint64_t maxlen;
};

static int tindex_add(struct tindex *t, uint32_t process, size_t i, uint64_t s, uint64_t e)
{
	if (util_grow((void **)&t->v, &t->cap, t->n, sizeof(*t->v)) < 0)
		return -ENOMEM;
	if (e < s)
		e = s;
	t->v[t->n++] = (struct tent){process, (uint32_t)i, s, e};
	if (e - s > t->maxlen)
		t->maxlen = e - s;
	return 0;
}

static int tent_cmp(const void *a, const void *b)
{
	const struct tent *x = a, *y = b;

	if (x->process != y->process)
		return x->process < y->process ? -1 : 1;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static void tindex_sort(struct tindex *t)
{
	if (t->n > 1)
		qsort(t->v, t->n, sizeof(*t->v), tent_cmp);
}

/* First entry of process proc that may overlap [start, ...). */
static size_t tindex_first(const struct tindex *t, uint32_t proc, uint64_t start)
{
	uint64_t from = start > t->maxlen ? start - t->maxlen : 0;
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->v[mid].process < proc || (t->v[mid].process == proc && t->v[mid].s < from))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* for each entry e of t overlapping step s (or starting in it): */
#define TINDEX_EACH(t, st, k)                                                      \
	for (size_t k = tindex_first((t), (st)->process, (st)->start);                \
	     k < (t)->n && (t)->v[k].process == (st)->process && (t)->v[k].s < (st)->end; \
	     k++)

struct step_ix {
	struct tindex gpu;       /* gpu_ops */
	struct tindex sync;      /* syncs, or the *Synchronize API calls of processes without */
	struct tindex mem;       /* mem_counters, s = e = ts */
};

static void step_ix_free(struct step_ix *ix)
{
	free(ix->gpu.v);
	free(ix->sync.v);
	free(ix->mem.v);
	memset(ix, 0, sizeof(*ix));
}

static int step_ix_build(const struct profile *p, struct step_ix *ix)
{
	unsigned char *proc_syncs = NULL;
	size_t i;
	int ret = -ENOMEM;

	memset(ix, 0, sizeof(*ix));
	if (p->nprocesses && !(proc_syncs = calloc(p->nprocesses, 1)))
		return -ENOMEM;
	for (i = 0; i < p->ngpu_ops; i++)
		if (tindex_add(&ix->gpu, p->gpu_ops[i].process, i, p->gpu_ops[i].start,
			       p->gpu_ops[i].end) < 0)
			goto out;
	for (i = 0; i < p->nsyncs; i++) {
		if (p->syncs[i].process < p->nprocesses)
			proc_syncs[p->syncs[i].process] = 1;
		if (tindex_add(&ix->sync, p->syncs[i].process, i, p->syncs[i].start,
			       p->syncs[i].end) < 0)
			goto out;
	}
	/* without CUPTI's sync records, the API calls that synchronize */
	for (i = 0; i < p->ncuda_api; i++) {
		const struct prof_cuda_api *c = &p->cuda_api[i];

		if (c->process < p->nprocesses && !proc_syncs[c->process] && is_sync_api(c->name) &&
		    tindex_add(&ix->sync, c->process, i, c->start, c->end) < 0)
			goto out;
	}
	for (i = 0; i < p->nmem_counters; i++)
		if (tindex_add(&ix->mem, p->mem_counters[i].process, i, p->mem_counters[i].ts,
			       p->mem_counters[i].ts) < 0)
			goto out;
	tindex_sort(&ix->gpu);
	tindex_sort(&ix->sync);
	tindex_sort(&ix->mem);
	ret = 0;
out:
	free(proc_syncs);
	if (ret < 0)
		step_ix_free(ix);
	return ret;
}

static int steps_figures(const struct profile *p, const struct sample_index *x,
			 const struct step_ix *ix, struct step *v, size_t nsteps)
{
	struct ival *iv = NULL;
	size_t cap = 0, k;

	for (k = 0; k < nsteps; k++) {
		struct step *s = &v[k];
		size_t j = sidx_lower(x, s->process, s->start), n = 0;

		for (; j < x->n && sample_proc(p, x->idx[j]) == s->process; j++) {
			const struct prof_sample *sm = &p->samples[x->idx[j]];

			if (sm->ts >= s->end)
				break;
			s->cpu_ns += (uint64_t)sm->weight * prof_period_of_thread(p, sm->thread);
		}
		TINDEX_EACH(&ix->gpu, s, e) {
			const struct prof_gpu_op *g = &p->gpu_ops[ix->gpu.v[e].i];

			if (g->end <= s->start)
				continue;
			if (g->start >= s->start) {
				s->kernels += g->kind == PROF_GPU_KERNEL;
				s->copies += g->kind == PROF_GPU_MEMCPY;
			}
			if (util_grow((void **)&iv, &cap, n, sizeof(*iv)) < 0) {
				free(iv);
				return -ENOMEM;
			}
			iv[n].s = g->start > s->start ? g->start : s->start;
			iv[n++].e = g->end < s->end ? g->end : s->end;
		}
		s->gpu_busy_ns = ival_union(iv, n);
		TINDEX_EACH(&ix->sync, s, e)
			s->sync_ns += clip(ix->sync.v[e].s, ix->sync.v[e].e, s->start, s->end);
		TINDEX_EACH(&ix->mem, s, e) {
			const struct prof_mem_counter *c = &p->mem_counters[ix->mem.v[e].i];

			if (c->ts >= s->start && c->host_live > 0 && (uint64_t)c->host_live > s->mem_peak)
				s->mem_peak = (uint64_t)c->host_live;
		}
	}
	free(iv);
	return 0;
}

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

static int distribution(struct step_analysis *a)
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
	size_t j = sidx_lower(x, s->process, s->start);

	for (; j < x->n && sample_proc(p, x->idx[j]) == s->process; j++) {
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

static int slow_steps(const struct profile *p, const struct sample_index *x,
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

static int cold_start(struct step_analysis *a)
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

/* --- entry ------------------------------------------------------------------------ */

static int step_cmp(const void *a, const void *b)
{
	const struct step *x = a, *y = b;

	if (x->process != y->process)
		return x->process < y->process ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static char *precision_of(const struct profile *p, uint32_t thread)
{
	uint64_t period = prof_period_of_thread(p, thread);
	char *s = NULL;

	if (asprintf(&s, "found on the samples of thread %u: each step starts at the first sample "
			 "inside the function and ends at the first outside it, so each edge is "
			 "known to one sampling period (%.3f ms), and a step shorter than one period "
			 "or a gap between steps shorter than one period can be missed",
		     thread < p->nthreads ? p->threads[thread].tid : 0, (double)period / 1e6) < 0)
		return NULL;
	return s;
}

int steps_analyze(const struct profile *p, const char *step_regex, const char *step_func,
		  struct step_analysis **out)
{
	struct step_analysis *a = NULL;
	struct sample_index x = {0};
	struct step_list l = {0};
	struct step_ix ix = {0};
	regex_t re;
	int have_re = 0, ret, source = 0, pass;
	uint32_t thread = UINT32_MAX;
	char *what = NULL;
	size_t i;

	*out = NULL;
	if (step_regex && *step_regex &&
	    regcomp(&re, step_regex, REG_EXTENDED | REG_NOSUB) == 0)
		have_re = 1;
	if ((ret = sidx_build(p, &x)) < 0)
		goto out;
	/*
	 * What the user named first (marks, then ranges, then the function),
	 * then cbn_step(): the first that gives two steps.  steps.h lists
	 * cbn_step() first, but a program annotated with both would then never
	 * show the steps asked for by --step or --step-func.
	 */
	for (pass = 0; pass < 4 && l.n < 2; pass++) {
		static const int sources[] = {STEP_SRC_MARKER, STEP_SRC_RANGE, STEP_SRC_FUNC,
					      STEP_SRC_MARKER};
		int n;

		l.n = 0;
		if ((pass < 2 && !have_re) || (pass == 2 && !(step_func && *step_func)))
			continue;
		if (pass == 0)
			ret = steps_from_markers(p, &re, &x, &l);
		else if (pass == 1)
			ret = steps_from_ranges(p, &re, &l);
		else if (pass == 2)
			ret = steps_from_func(p, step_func, &l, &thread);
		else
			ret = steps_from_markers(p, NULL, &x, &l);
		if (ret < 0)
			goto out;
		if (l.n < 2)
			continue;
		source = sources[pass];
		if (pass == 0)
			n = asprintf(&what, "marks matching '%s'", step_regex);
		else if (pass == 1)
			n = asprintf(&what, "ranges matching '%s'", step_regex);
		else if (pass == 2)
			n = asprintf(&what, "function %s", step_func);
		else if (have_re || (step_func && *step_func))
			/* say that what was asked for gave nothing */
			n = asprintf(&what, "cbn_step() (%s%s%s%s%s gave fewer than two steps)",
				     have_re ? "--step " : "", have_re ? step_regex : "",
				     have_re && step_func && *step_func ? ", " : "",
				     step_func && *step_func ? "--step-func " : "",
				     step_func && *step_func ? step_func : "");
		else
			n = asprintf(&what, "cbn_step()");
		if (n < 0) {
			what = NULL;
			ret = -ENOMEM;
			goto out;
		}
	}
	if (l.n < 2)
		goto out;
	ret = -ENOMEM;
	if (!(a = calloc(1, sizeof(*a))))
		goto out;
	qsort(l.v, l.n, sizeof(*l.v), step_cmp);
	a->source = source;
	a->what = what;
	what = NULL;
	a->steps = l.v;
	a->nsteps = l.n;
	l.v = NULL;
	if (source == STEP_SRC_FUNC && !(a->precision = precision_of(p, thread)))
		goto out;
	for (i = 0; i < p->nprocesses; i++)
		a->controlled |= p->processes[i].capture.mode == CBN_CAPTURE_CONTROLLED;
	if (a->controlled)
		for (i = 0; i < p->nwindows; i++)
			a->window_ns += p->windows[i].end - p->windows[i].start;
	if ((ret = step_ix_build(p, &ix)) < 0)
		goto out;
	if ((ret = steps_figures(p, &x, &ix, a->steps, a->nsteps)) < 0 ||
	    (ret = distribution(a)) < 0 || (ret = slow_steps(p, &x, &ix, a)) < 0 ||
	    (ret = cold_start(a)) < 0)
		goto out;
	*out = a;
	a = NULL;
	ret = 0;
out:
	if (have_re)
		regfree(&re);
	free(x.idx);
	free(l.v);
	free(what);
	step_ix_free(&ix);
	steps_free(a);
	return ret;
}

void steps_free(struct step_analysis *s)
{
	if (!s)
		return;
	free((char *)s->what);
	free((char *)s->precision);
	free(s->steps);
	free(s->slow);
	rules_findings_free(s->findings, s->nfindings);
	free(s);
}
