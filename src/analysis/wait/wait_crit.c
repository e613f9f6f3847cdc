/*
 * wait_crit.c — the critical thread of the waiting view (wait.h): per
 * process, a grid of threads x time buckets of computing and waiting; a
 * thread that alone computes while others wait is credited with their
 * waiting.  Formulas: docs/waiting.md.
 */
#include <errno.h>
#include <stdlib.h>

#include "span.h"
#include "wait_int.h"

#define WAIT_BUCKET_NS 10000000ull   /* critical thread: 10 ms buckets ... */
#define WAIT_BUCKET_CELLS (1u << 20) /* ... at most this many (threads x buckets) a process:
				     * 16 MiB of grid */
#define WAIT_CRIT_MIN 0.2            /* critical: its credit, of all waiting, at least */

/* --- the critical thread --------------------------------------------------------- */

struct crit {
	double *credit;          /* per thread: others' waiting while it alone computed */
	double *waited;          /* per thread: its waiting, in the buckets */
	uint32_t *most;          /* per thread: most threads waiting at once while it computed */
	uint32_t *pos;           /* thread -> row in the process's grid */
	/* samples by process (a counting sort): those of process q are
	 * byproc[pfirst[q] .. pfirst[q + 1]); a scan of every sample per
	 * process was quadratic in a run of many processes (1024 MPI ranks) */
	uint32_t *byproc;
	size_t *pfirst;
};

/* One process's grid: nt threads (rows: their index in p->threads) by nb
 * buckets of width ns from ps; per cell, ns computing and ns waiting. */
struct crit_grid {
	uint64_t ps, pe, width, span;
	size_t nb;
	uint32_t nt, *rows;
	double *comp, *wait;
};

/* The samples of process pi into the grid: spin is waiting, the rest
 * computing. */
static void grid_samples(const struct profile *p, uint32_t pi, const uint8_t *act,
			 const struct crit *c, struct crit_grid *g)
{
	size_t k, b;

	for (k = c->pfirst[pi]; k < c->pfirst[pi + 1]; k++) {
		size_t i = c->byproc[k];
		const struct prof_sample *s = &p->samples[i];
		uint64_t ns = (uint64_t)s->weight * prof_period_of_thread(p, s->thread);

		b = s->ts <= g->ps ? 0 : (size_t)((s->ts - g->ps) / g->width);
		if (b >= g->nb)
			b = g->nb - 1;
		if (act[i] == WAIT_ACT_SPIN)
			g->wait[(size_t)c->pos[s->thread] * g->nb + b] += (double)ns;
		else
			g->comp[(size_t)c->pos[s->thread] * g->nb + b] += (double)ns;
	}
}

/* With --off-cpu: the futex waits of process pi, spread over the buckets
 * they overlap, in proportion.  Only futex waits wait on another thread: a
 * sleep, I/O or a child is no wait on the critical thread. */
static void grid_futex(const struct profile *p, uint32_t pi, const struct crit *c,
		       struct crit_grid *g)
{
	size_t i, b;

	for (i = 0; i < p->noffcpu; i++) {
		const struct prof_offcpu *r = &p->offcpu[i];
		uint64_t s = r->start, e = r->end;
		double *row;

		if (r->thread >= p->nthreads || p->threads[r->thread].process != pi ||
		    r->kind != CBN_OFF_FUTEX || !r->weight_ns)
			continue;
		row = &g->wait[(size_t)c->pos[r->thread] * g->nb];
		if (e <= s || e <= g->ps || s >= g->pe) {
			b = s <= g->ps ? 0 : (size_t)((s - g->ps) / g->width);
			row[b < g->nb ? b : g->nb - 1] += (double)r->weight_ns;
			continue;
		}
		for (b = s <= g->ps ? 0 : (size_t)((s - g->ps) / g->width); b < g->nb; b++) {
			uint64_t bs = g->ps + b * g->width, be = bs + g->width;
			uint64_t lo = s > bs ? s : bs, hi = e < be ? e : be;

			if (lo >= e)
				break;
			if (hi > lo)
				row[b] += (double)r->weight_ns * (double)(hi - lo) / (double)(e - s);
		}
	}
}

/* Without --off-cpu: waiting is the time alive and not on the CPU, inside
 * what was recorded (a bucket only partly inside the capture windows counts
 * that part). */
static int grid_idle(const struct profile *p, uint32_t pi, struct crit_grid *g)
{
	double *cov = calloc(g->nb, sizeof(*cov));
	size_t b, nb = g->nb;
	uint32_t t;

	if (!cov)
		return -ENOMEM;
	for (b = 0; b < nb; b++)
		cov[b] = (double)span_in_process(p, pi, g->ps + b * g->width,
						 g->ps + (b + 1) * g->width) /
			 (double)g->width;
	for (t = 0; t < g->nt; t++) {
		uint64_t ts, te;

		wait_thread_span(p, g->rows[t], &ts, &te);
		for (b = 0; b < nb; b++) {
			uint64_t bs = g->ps + b * g->width, be = bs + g->width;
			uint64_t lo = ts > bs ? ts : bs, hi = te < be ? te : be;
			double idle = hi > lo ? (double)(hi - lo) * cov[b] - g->comp[t * nb + b] -
						      g->wait[t * nb + b] : 0.0;

			if (idle > 0)
				g->wait[t * nb + b] += idle;
		}
	}
	free(cov);
	return 0;
}

/* A bucket in which exactly one thread computes half the bucket or more
 * credits it with the others' waiting there. */
static void grid_credit(const struct crit_grid *g, struct crit *c)
{
	size_t b, nb = g->nb;
	uint32_t t;

	for (b = 0; b < nb; b++) {
		uint32_t busy = PROF_NONE, nbusy = 0, waiting = 0;
		double others = 0;

		for (t = 0; t < g->nt; t++) {
			c->waited[g->rows[t]] += g->wait[t * nb + b];
			if (g->comp[t * nb + b] >= 0.5 * (double)g->width) {
				busy = t;
				nbusy++;
			}
		}
		if (nbusy != 1)
			continue;
		for (t = 0; t < g->nt; t++) {
			if (t == busy)
				continue;
			others += g->wait[t * nb + b];
			waiting += g->wait[t * nb + b] >= 0.5 * (double)g->width;
		}
		c->credit[g->rows[busy]] += others;
		if (waiting > c->most[g->rows[busy]])
			c->most[g->rows[busy]] = waiting;
	}
}

/*
 * One process: per thread and bucket, compute (on-CPU but not spinning) and
 * wait (futex stretches spread over the buckets they overlap, plus spin;
 * without --off-cpu, the time alive and not on the CPU); then the credits.
 */
static int crit_process(const struct profile *p, const struct wait_analysis *w, uint32_t pi,
			const uint8_t *act, struct crit *c)
{
	struct crit_grid g = { 0 };
	uint64_t period = prof_period_of_process(p, pi);
	size_t i;
	uint32_t t;
	int ret = -ENOMEM;

	wait_proc_span(p, pi, &g.ps, &g.pe);
	g.span = g.pe - g.ps;
	for (i = 0; i < p->nthreads; i++)
		if (p->threads[i].process == pi)
			c->pos[i] = g.nt++;
	if (g.nt < 2 || !g.span)
		return 0;
	g.width = WAIT_BUCKET_NS;
	if (period > g.width && period < g.span)
		g.width = period;
	g.nb = (size_t)((g.span + g.width - 1) / g.width);
	if (g.nb > WAIT_BUCKET_CELLS / g.nt) {
		g.nb = WAIT_BUCKET_CELLS / g.nt ? WAIT_BUCKET_CELLS / g.nt : 1;
		g.width = g.span / g.nb + 1;
		g.nb = (size_t)((g.span + g.width - 1) / g.width);
	}
	g.comp = calloc(g.nb * g.nt, sizeof(*g.comp));
	g.wait = calloc(g.nb * g.nt, sizeof(*g.wait));
	g.rows = calloc(g.nt, sizeof(*g.rows));
	if (!g.comp || !g.wait || !g.rows)
		goto out;
	for (i = 0, t = 0; i < p->nthreads; i++)
		if (p->threads[i].process == pi)
			g.rows[t++] = (uint32_t)i;
	grid_samples(p, pi, act, c, &g);
	if (w->offcpu)
		grid_futex(p, pi, c, &g);
	else if (grid_idle(p, pi, &g) < 0)
		goto out;
	grid_credit(&g, c);
	ret = 0;
out:
	free(g.comp);
	free(g.wait);
	free(g.rows);
	return ret;
}

int wait_critical_thread(const struct profile *p, struct wait_analysis *w, const uint8_t *act,
			 struct wait_ctx *ctx)
{
	struct crit c = { 0 };
	size_t n = p->nthreads ? p->nthreads : 1, i;
	double all = 0, others = 0;
	uint32_t best = PROF_NONE;
	int ret = -ENOMEM;

	c.credit = calloc(n, sizeof(*c.credit));
	c.waited = calloc(n, sizeof(*c.waited));
	c.most = calloc(n, sizeof(*c.most));
	c.pos = calloc(n, sizeof(*c.pos));
	c.byproc = calloc(p->nsamples ? p->nsamples : 1, sizeof(*c.byproc));
	c.pfirst = calloc(p->nprocesses + 2, sizeof(*c.pfirst));
	if (!c.credit || !c.waited || !c.most || !c.pos || !c.byproc || !c.pfirst)
		goto out;
	for (i = 0; i < p->nsamples; i++) {
		uint32_t t = p->samples[i].thread;

		if (t < p->nthreads && p->threads[t].process < p->nprocesses)
			c.pfirst[p->threads[t].process + 2]++;
	}
	for (i = 0; i < p->nprocesses; i++)
		c.pfirst[i + 2] += c.pfirst[i + 1];
	for (i = 0; i < p->nsamples; i++) {
		uint32_t t = p->samples[i].thread;

		if (t < p->nthreads && p->threads[t].process < p->nprocesses)
			c.byproc[c.pfirst[p->threads[t].process + 1]++] = (uint32_t)i;
	}
	for (i = 0; i < p->nprocesses; i++)
		if ((ret = crit_process(p, w, (uint32_t)i, act, &c)) < 0)
			goto out;
	for (i = 0; i < p->nthreads; i++) {
		all += c.waited[i];
		if (c.credit[i] > 0 && (best == PROF_NONE || c.credit[i] > c.credit[best]))
			best = (uint32_t)i;
	}
	ret = 0;
	if (best == PROF_NONE || c.credit[best] < WAIT_CRIT_MIN * all)
		goto out;
	for (i = 0; i < p->nthreads; i++)
		if (i != best && p->threads[i].process == p->threads[best].process) {
			uint64_t s, e;

			others += c.waited[i];
			wait_thread_span(p, (uint32_t)i, &s, &e);
			ctx->critical_others_wall += span_in_process(p, p->threads[i].process, s, e);
		}
	w->critical = best;
	w->critical_share = others > 0 ? c.credit[best] / others : 0.0;
	if (w->critical_share > 1.0)
		w->critical_share = 1.0;
	w->critical_waiters = c.most[best];
	ctx->critical_credit = (uint64_t)c.credit[best];
out:
	free(c.credit);
	free(c.waited);
	free(c.most);
	free(c.pos);
	free(c.byproc);
	free(c.pfirst);
	return ret;
}

