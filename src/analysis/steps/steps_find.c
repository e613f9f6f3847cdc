/*
 * steps_find.c — the run's steps (steps.h): from markers (cbn_step(), marks
 * matching --step), ranges matching --step, or a function found on the
 * samples (--step-func), kept inside the capture windows; and the index of
 * samples by (process, time) every per-step sum searches.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "steps_int.h"
#include "util.h"

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

uint32_t steps_sample_proc(const struct profile *p, uint32_t si)
{
	uint32_t t = p->samples[si].thread;

	return t < p->nthreads ? p->threads[t].process : UINT32_MAX;
}

/* First position in the index with (process, ts) >= (proc, ts). */
size_t steps_sidx_lower(const struct sample_index *x, uint32_t proc, uint64_t ts)
{
	size_t lo = 0, hi = x->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		uint32_t pm = steps_sample_proc(x->p, x->idx[mid]);

		if (pm < proc || (pm == proc && x->p->samples[x->idx[mid]].ts < ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int steps_sidx_build(const struct profile *p, struct sample_index *x)
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
	size_t k = steps_sidx_lower(x, proc, start);

	return k < x->n && steps_sample_proc(x->p, x->idx[k]) == proc &&
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
int steps_from_markers(const struct profile *p, const struct cbn_rx *re,
		       const struct sample_index *x, struct step_list *l)
{
	struct marker *m = NULL;
	size_t n = 0, cap = 0, i, j;
	int ret = 0;

	for (i = 0; i < p->nranges; i++) {
		const struct prof_range *r = &p->ranges[i];

		if (re ? !range_is_step(r, 1) || !r->name || !cbn_rx_search(re, r->name) :
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
int steps_from_ranges(const struct profile *p, const struct cbn_rx *re, struct step_list *l)
{
	size_t *m = NULL, n = 0, cap = 0, i;
	uint64_t number = 0, last_end = 0;
	uint32_t proc = UINT32_MAX;
	int ret = 0;

	for (i = 0; i < p->nranges; i++) {
		const struct prof_range *r = &p->ranges[i];

		if (!range_is_step(r, 0) || r->end < r->start || !r->name ||
		    !cbn_rx_search(re, r->name))
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

/* The thread's blocked stretches (runnable ones are no sign of leaving a
 * call: the thread was preempted where it was), by start. */
struct offs {
	const struct prof_offcpu **v;
	size_t n;
};

static int off_start_cmp(const void *a, const void *b)
{
	const struct prof_offcpu *x = *(const struct prof_offcpu *const *)a;
	const struct prof_offcpu *y = *(const struct prof_offcpu *const *)b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int offs_of(const struct profile *p, uint32_t thread, struct offs *o)
{
	size_t i;

	o->n = 0;
	if (!(o->v = calloc(p->noffcpu ? p->noffcpu : 1, sizeof(*o->v))))
		return -ENOMEM;
	for (i = 0; i < p->noffcpu; i++)
		if (p->offcpu[i].thread == thread && p->offcpu[i].kind != CBN_OFF_RUNQ &&
		    p->offcpu[i].end > p->offcpu[i].start)
			o->v[o->n++] = &p->offcpu[i];
	qsort(o->v, o->n, sizeof(*o->v), off_start_cmp);
	return 0;
}

/*
 * Did the call that sample a was in end before sample b (both inside the
 * function, nothing sampled between them)?  A blocked stretch between them
 * whose stack lacks the function says so, and when (*end: its start); one
 * whose stack holds it says no (the call blocked inside).  Without looks
 * (or with looks that fell behind) a stretch off the CPU longer than
 * STEP_FUNC_GAP_NS ends the call at the last sample inside it, unless the
 * stretches cannot be told from waits for a CPU (gaps_unused, gap_rule).
 */
static int call_ended(const struct profile *p, const unsigned char *smatch,
		      const struct offs *o, size_t *k, uint64_t a, uint64_t b,
		      uint64_t cpu_b, uint64_t period, uint64_t *end, struct step_edges *e)
{
	size_t j;

	/* a stretch's start is the look that first found the thread there
	 * (docs/format.md, OFFCPU); its end runs to the next look, so only
	 * the looks between the two samples say where the thread was */
	while (*k < o->n && o->v[*k]->start < a)
		(*k)++;
	for (j = *k; j < o->n && o->v[j]->start < b; j++) {
		const struct prof_offcpu *r = o->v[j];

		if (r->stack >= p->nstacks || (r->flags & CBN_OFFCPU_NO_STACK))
			continue;
		if (smatch[r->stack])
			return 0; /* blocked inside the call */
		/* it left the call within one period of CPU after the last
		 * sample inside (else another sample would have found it
		 * there), and before the look */
		*end = r->start < a + period ? r->start : a + period;
		e->by_look++;
		return 1;
	}
	if ((e->looked && !e->behind) || e->gaps_unused || b - a <= cpu_b + STEP_FUNC_GAP_NS)
		return 0;
	*end = a + period < b - cpu_b ? a + period : b - cpu_b;
	e->by_gap++;
	return 1;
}

/*
 * Whether a stretch off the CPU between two samples may end a call on the
 * thread (ts: its n samples by time): not where the off-CPU looks kept up
 * (they say where the thread waited), nor where the stretches may as well be
 * waits for a CPU (enum step_gaps_unused): a loaded machine, which a return
 * from the function cannot be told from.
 */
static void gap_rule(const struct profile *p, uint32_t thread, const uint32_t *ts, size_t n,
		     uint64_t period, struct step_edges *e)
{
	const struct prof_offcpu_proc *oc = &p->processes[p->threads[thread].process].offcpu;
	uint64_t off = 0, runq = 0;
	size_t i;

	e->looked = oc->state == CBN_OFFCPU_ON;
	e->look_ns = oc->rate_hz ? 1000000000ull / oc->rate_hz : 0;
	e->late_ns = oc->ticks ? oc->late_ns / oc->ticks : 0;
	e->behind = e->looked && e->look_ns && e->late_ns > e->look_ns;
	for (i = 1; i < n; i++) {
		uint64_t cpu = (uint64_t)p->samples[ts[i]].weight * period;
		uint64_t gap = p->samples[ts[i]].ts - p->samples[ts[i - 1]].ts;

		e->pairs++;
		off += gap > cpu ? gap - cpu : 0;
		e->short_stops += gap > cpu + STEP_FUNC_SHORT_NS && gap <= cpu + STEP_FUNC_GAP_NS;
	}
	if (e->looked && !e->behind)
		return;
	if (e->looked) {
		for (i = 0; i < p->noffcpu; i++)
			if (p->offcpu[i].thread == thread && p->offcpu[i].kind == CBN_OFF_RUNQ)
				runq += p->offcpu[i].weight_ns;
		e->runq_share = off ? (runq >= off ? 1.0 : (double)runq / (double)off) : 0;
		if (e->runq_share >= STEP_FUNC_RUNQ_MAX)
			e->gaps_unused = STEP_GAPS_RUNQ;
	} else if (p->env.found && p->env.cpus > 0 && p->env.load[0] >= p->env.cpus) {
		e->gaps_unused = STEP_GAPS_LOAD;
	}
	if (!e->gaps_unused && e->pairs >= STEP_FUNC_PAIRS_MIN &&
	    e->short_stops > STEP_FUNC_SHORT_SHARE * e->pairs)
		e->gaps_unused = STEP_GAPS_SHORT;
}

/*
 * Each call of the function on the thread that runs it most, from its first
 * sample to the first sign it ended: a sample of the thread outside the
 * function, a look of the off-CPU sampler that found it blocked outside it
 * (call_ended), the thread's or the window's end.
 */
int steps_from_func(const struct profile *p, const char *name, struct step_list *l,
		    struct step_edges *e)
{
	unsigned char *fmatch = NULL, *smatch = NULL;
	uint64_t *tw = NULL;
	uint32_t *ts = NULL, best = UINT32_MAX;
	struct offs offs = { 0 };
	size_t i, n = 0, any = 0, k = 0;
	int ret = 0;

	memset(e, 0, sizeof(*e));
	e->thread = UINT32_MAX;
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
	e->thread = best;
	if (!(ts = util_reallocarray(NULL, p->nsamples, sizeof(*ts))) ||
	    offs_of(p, best, &offs) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < p->nsamples; i++)
		if (p->samples[i].thread == best && !(p->samples[i].flags & PROF_SAMPLE_SPLIT))
			ts[n++] = (uint32_t)i;
	qsort_r(ts, n, sizeof(*ts), ts_cmp, (void *)p);
	{
		uint32_t proc = p->threads[best].process;
		uint64_t number = 0, start = 0, period = prof_period_of_thread(p, best), end;
		long w = WIN_NONE, wr = WIN_NONE;
		int in = 0;

		gap_rule(p, best, ts, n, period, e);
		for (i = 0; i <= n; i++) {
			const struct prof_sample *s = i < n ? &p->samples[ts[i]] : NULL;
			int match = s && s->stack < p->nstacks && smatch[s->stack];

			w = s ? window_at(p, proc, s->ts) : WIN_NONE;
			/* two samples inside: did a call end between them? */
			if (in && match && w == wr &&
			    call_ended(p, smatch, &offs, &k, p->samples[ts[i - 1]].ts,
				       s->ts, (uint64_t)s->weight * period, period, &end, e)) {
				if (end > start && (ret = step_add(l, proc, number++, start, end)) < 0)
					goto out;
				in = 0;
			}
			if (in && (!match || w != wr)) {
				/* the run ends at this sample; at its last one when the
				 * thread or the window ends inside the function */
				end = s && w == wr ? s->ts : p->samples[ts[i - 1]].ts;
				e->by_sample += s && w == wr;
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
	free(offs.v);
	return ret;
}
