/*
 * trace_lanes.c — the trace's lanes: overlapping slices of one lane spread
 * over overflow lanes so every lane strictly nests, the order events are
 * written in, and the flows from a launch to its GPU work.
 */
#include "util.h"
#include "trace_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* --- lanes --------------------------------------------------------------- */

static int cmp_lane_order(const void *a, const void *b)
{
	const struct tev *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	return x->ref < y->ref ? -1 : x->ref > y->ref;
}

int trace_cmp_lane(const void *a, const void *b)
{
	const struct lane *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

struct lane_stack {
	int64_t *end;
	size_t n, cap;
};

/*
 * Perfetto needs slices strictly nested per track (other-formats.md): walk each
 * lane in start order with one stack of open ends per slot; a slice goes to
 * the first slot where it nests, so a slice that partially overlaps another
 * moves to an overflow lane.  When all slots are taken it is clamped to end
 * with the enclosing slice of the last slot.
 */
static int trace_add_lane(struct tctx *c, const struct tev *e, uint8_t slot)
{
	if (c->nlanes == c->cap_lanes) {
		size_t cap = c->cap_lanes ? c->cap_lanes * 2 : 64;
		struct lane *v = util_reallocarray(c->lanes, cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->lanes = v;
		c->cap_lanes = cap;
	}
	c->lanes[c->nlanes++] = (struct lane){e->pid, e->tid, e->thr, e->kind, slot};
	return 0;
}

int trace_assign_slots(struct tctx *c, struct tvec *t)
{
	struct lane_stack ls[TRACE_MAX_SLOTS];
	size_t i = 0;
	int rc = 0;

	memset(ls, 0, sizeof(ls));
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp_lane_order);
	while (i < t->n) {
		size_t j = i;
		uint32_t used = 0;

		for (int s = 0; s < TRACE_MAX_SLOTS; s++)
			ls[s].n = 0;
		for (; j < t->n && t->v[j].pid == t->v[i].pid && t->v[j].tid == t->v[i].tid &&
		       t->v[j].kind == t->v[i].kind;
		     j++) {
			struct tev *e = &t->v[j];
			int64_t end = e->ts + e->dur;
			int s;

			for (s = 0; s < TRACE_MAX_SLOTS; s++) {
				struct lane_stack *l = &ls[s];

				while (l->n && l->end[l->n - 1] <= e->ts)
					l->n--;
				if (!l->n || l->end[l->n - 1] >= end)
					break;
			}
			if (s == TRACE_MAX_SLOTS) {
				s = TRACE_MAX_SLOTS - 1;
				end = ls[s].end[ls[s].n - 1];
				e->dur = end - e->ts;
			}
			if (ls[s].n == ls[s].cap) {
				size_t cap = ls[s].cap ? ls[s].cap * 2 : 64;
				int64_t *v = util_reallocarray(ls[s].end, cap, sizeof(*v));

				if (!v) {
					rc = -ENOMEM;
					goto out;
				}
				ls[s].end = v;
				ls[s].cap = cap;
			}
			ls[s].end[ls[s].n++] = end;
			e->slot = (uint8_t)s;
			used |= 1u << s;
		}
		for (int s = 0; s < TRACE_MAX_SLOTS && !rc; s++)
			if (used & (1u << s))
				rc = trace_add_lane(c, &t->v[i], (uint8_t)s);
		if (rc)
			goto out;
		i = j;
	}
out:
	for (int s = 0; s < TRACE_MAX_SLOTS; s++)
		free(ls[s].end);
	return rc;
}

int trace_cmp_emit(const void *a, const void *b)
{
	const struct tev *x = a, *y = b;
	int fx = x->type >= TEV_FLOW_S, fy = y->type >= TEV_FLOW_S;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (fx != fy)
		return fx < fy ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (trace_lane_tid(x) != trace_lane_tid(y))
		return trace_lane_tid(x) < trace_lane_tid(y) ? -1 : 1;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	return x->ref < y->ref ? -1 : x->ref > y->ref;
}

int trace_add_flows(struct tctx *c, struct tvec *t)
{
	const struct profile *p = c->p;
	size_t *api_at = NULL, n = t->n;
	uint8_t *api_used = NULL;
	int rc = 0;

	if (!p->ngpu_ops || !p->ncuda_api)
		return 0;
	api_at = util_reallocarray(NULL, p->ncuda_api, sizeof(*api_at));
	api_used = calloc(p->ncuda_api, 1);
	if (!api_at || !api_used) {
		free(api_at);
		free(api_used);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->ncuda_api; i++)
		api_at[i] = SIZE_MAX;
	for (size_t i = 0; i < n; i++)
		if (t->v[i].type == TEV_API)
			api_at[t->v[i].ref] = i;
	for (size_t i = 0; i < n; i++) {
		const struct prof_gpu_op *g;
		struct tev s, f;

		if (t->v[i].type != TEV_GPU)
			continue;
		g = &p->gpu_ops[t->v[i].ref];
		if (g->api == PROF_NONE || g->api >= p->ncuda_api || api_at[g->api] == SIZE_MAX)
			continue;
		s = t->v[api_at[g->api]];
		f = t->v[i];
		s.type = TEV_FLOW_S;
		f.type = TEV_FLOW_F;
		s.dur = f.dur = 0;
		if (api_used[g->api]) /* a graph launch: one call, many ops */
			s.flow = f.flow = (1ull << 52) | t->v[i].ref;
		else
			s.flow = f.flow =
			    ((uint64_t)g->process << 32) | p->cuda_api[g->api].correlation;
		api_used[g->api] = 1;
		if (tvec_push(t, &s) || tvec_push(t, &f)) {
			rc = -ENOMEM;
			break;
		}
	}
	free(api_at);
	free(api_used);
	return rc;
}
