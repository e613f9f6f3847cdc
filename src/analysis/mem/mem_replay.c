/*
 * mem_replay.c — one process's sampled allocations replayed in time order:
 * each free paired with the allocation it released, live bytes per site and
 * in all, the estimated peak and the live-bytes curve.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "mem_int.h"
#include "util.h"

struct pair_ev {
	uint64_t addr, ts;
	uint32_t idx, is_free;
};

static int pair_cmp(const void *a, const void *b)
{
	const struct pair_ev *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->is_free != y->is_free)
		return x->is_free ? 1 : -1;  /* an allocation before a free at the same time */
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int death_cmp(const void *a, const void *b)
{
	const struct death *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->alloc < y->alloc ? -1 : x->alloc > y->alloc;
}

/* Pair each free with the allocation it released: per address, in time
 * order, a free ends the latest allocation not yet ended; an allocation
 * ends the one before it when no free came between.  Frees that match
 * nothing (blocks sampled before a fork, lost records) are dropped. */
int mem_replay_pair(const struct profile *p, struct replay *r)
{
	size_t na = r->a1 - r->a0, nf = r->f1 - r->f0, n = 0, i;
	struct pair_ev *ev = calloc(na + nf + 1, sizeof(*ev));
	uint32_t pending = UINT32_MAX;
	uint64_t addr = 0;

	if (!ev || !(r->deaths = calloc(na + 1, sizeof(*r->deaths)))) {
		free(ev);
		return -ENOMEM;
	}
	for (i = r->a0; i < r->a1; i++)
		ev[n++] = (struct pair_ev){ p->mem_allocs[i].addr, p->mem_allocs[i].ts, (uint32_t)i, 0 };
	for (i = r->f0; i < r->f1; i++)
		ev[n++] = (struct pair_ev){ p->mem_frees[i].addr, p->mem_frees[i].ts, (uint32_t)i, 1 };
	qsort(ev, n, sizeof(*ev), pair_cmp);
	memset(r->dead + r->a0, 0, na);
	for (i = 0; i < n; i++) {
		if (i == 0 || ev[i].addr != addr) {
			addr = ev[i].addr;
			pending = UINT32_MAX;
		}
		if (pending != UINT32_MAX) {
			r->deaths[r->ndeaths++] = (struct death){ ev[i].ts, pending, ev[i].is_free };
			r->dead[pending] = 1;
			pending = UINT32_MAX;
		}
		if (!ev[i].is_free)
			pending = ev[i].idx;
	}
	free(ev);
	qsort(r->deaths, r->ndeaths, sizeof(*r->deaths), death_cmp);
	return 0;
}

/* Append a point to the curve; with r->per > 1, points are pooled r->per at
 * a time into the one with the highest live bytes (and the pool's highest
 * RSS), so a long run never holds more than about MEM_TIMELINE_MAX of them. */
int mem_push_point(struct replay *r, uint64_t ts, double live, uint64_t rss)
{
	struct mem_point *pt;
	int64_t l = (int64_t)(live + 0.5);

	if (r->inpool && r->npts) {
		pt = &r->pts[r->npts - 1];
		if (l > pt->live) {
			pt->ts = ts;
			pt->live = l;
		}
		if (rss > pt->rss)
			pt->rss = rss;
	} else {
		if (util_grow((void **)&r->pts, &r->cappts, r->npts, sizeof(*r->pts)) < 0)
			return -ENOMEM;
		pt = &r->pts[r->npts++];
		pt->ts = ts;
		pt->live = l;
		pt->rss = rss;
	}
	if (++r->inpool >= r->per)
		r->inpool = 0;
	return 0;
}

/* Each site's live bytes, their certain part and the uncertain records
 * behind the rest, at r->snap_ts. */
static void replay_snap(const struct host_ctx *h, struct replay *r)
{
	memcpy(r->snap, h->live, h->m->nsites * sizeof(*h->live));
	memcpy(r->snap_sure, h->sure, h->m->nsites * sizeof(*h->sure));
	memcpy(r->snap_n, h->nunsure, h->m->nsites * sizeof(*h->nunsure));
}

/* Births and deaths of one process's sampled blocks in time order (a birth
 * before a free at the same time, a replaced block's end before the birth
 * that replaced it), tracking each site's live bytes. */
int mem_replay_run(struct host_ctx *h, struct replay *r)
{
	const struct profile *p = h->p;
	size_t ai = r->a0, di = 0, ci = r->c0, s;
	double total = 0;
	uint64_t rss = 0;
	int ret, snapped = 0;

	for (s = h->first_site; s < h->m->nsites; s++) {
		h->live[s] = h->sure[s] = 0;
		h->nunsure[s] = 0;
	}
	while (ai < r->a1 || di < r->ndeaths || (r->stats && ci < r->c1)) {
		uint64_t ta = ai < r->a1 ? p->mem_allocs[ai].ts : UINT64_MAX;
		uint64_t td = di < r->ndeaths ? r->deaths[di].ts : UINT64_MAX;
		uint64_t tc = r->stats && ci < r->c1 ? p->mem_counters[ci].ts : UINT64_MAX;
		/* a birth first on equal times, except after a block it replaces */
		int birth = ta < td || (ta == td && di < r->ndeaths && r->deaths[di].freed);
		uint64_t t = birth ? ta : td;

		if (tc < t) {
			rss = p->mem_counters[ci++].rss;
			if ((ret = mem_push_point(r, tc, total, rss)) < 0)
				return ret;
			continue;
		}
		if (r->snap_ts && !snapped && t > r->snap_ts) {
			replay_snap(h, r);
			snapped = 1;
		}
		if (birth) {
			uint32_t si = h->asite[ai];
			double b = (double)p->mem_allocs[ai].size * h->aw[ai];

			h->live[si] += b;
			if (h->aw[ai] < MEM_SURE_WEIGHT)
				h->sure[si] += b;
			else
				h->nunsure[si]++;
			total += b;
			if (r->stats && h->live[si] > h->m->sites[si].max_live) {
				h->m->sites[si].max_live = h->live[si];
				h->m->sites[si].max_live_known =
					h->nunsure[si] == 0 || h->nunsure[si] >= MEM_EST_MIN_RECORDS ||
					h->sure[si] >= 0.5 * h->live[si];
			}
			ai++;
		} else {
			const struct death *d = &r->deaths[di++];
			const struct prof_mem_alloc *a = &p->mem_allocs[d->alloc];
			uint32_t si = h->asite[d->alloc];

			h->live[si] -= (double)a->size * h->aw[d->alloc];
			if (h->aw[d->alloc] < MEM_SURE_WEIGHT)
				h->sure[si] -= (double)a->size * h->aw[d->alloc];
			else if (h->nunsure[si])
				h->nunsure[si]--;
			total -= (double)a->size * h->aw[d->alloc];
			if (r->stats && d->freed) {
				uint64_t life = d->ts > a->ts ? d->ts - a->ts : 0;
				struct life *l;

				if (life < MEM_SHORT_NS)
					h->m->sites[si].short_lived += h->aw[d->alloc];
				if (util_grow((void **)&h->lives, &h->caplives, h->nlives,
					      sizeof(*h->lives)) < 0)
					return -ENOMEM;
				l = &h->lives[h->nlives++];
				l->site = si;
				l->ns = life;
			}
		}
		if (total < 0.5 && total > -0.5)
			total = 0;
		if (r->stats) {
			if (total > r->peak) {
				r->peak = total;
				r->peak_ts = t;
			}
			if ((ret = mem_push_point(r, t, total, rss)) < 0)
				return ret;
		}
	}
	if (r->snap_ts && !snapped)
		replay_snap(h, r);
	r->live_end = total;
	return 0;
}

/* Keep at most MEM_TIMELINE_MAX points: in each bucket of consecutive points,
 * the one with the highest live bytes (and the bucket's highest RSS), so the
 * peak survives. */
void mem_timeline_reduce(struct mem_point *pts, size_t *n)
{
	size_t i, o = 0, per;

	if (*n <= MEM_TIMELINE_MAX)
		return;
	per = (*n + MEM_TIMELINE_MAX - 1) / MEM_TIMELINE_MAX;
	for (i = 0; i < *n; i += per) {
		size_t j, best = i, end = i + per < *n ? i + per : *n;
		uint64_t rss = 0;

		for (j = i; j < end; j++) {
			if (pts[j].live > pts[best].live)
				best = j;
			if (pts[j].rss > rss)
				rss = pts[j].rss;
		}
		pts[o] = pts[best];
		pts[o++].rss = rss;
	}
	*n = o;
}

/* The innermost range open at ts on any thread of process proc. */
