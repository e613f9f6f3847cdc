/*
 * trace_ids.c — where a trace event goes: times relative to the run's start
 * and clipped to the window, the trace pid of each process (ranks grouped),
 * the tid of each thread's lanes.
 */
#include "trace_int.h"

#include <stdlib.h>
#include <string.h>

int64_t trace_rel(const struct tctx *c, uint32_t proc, uint64_t ts)
{
	return (int64_t)(prof_rank_time(c->p, proc, ts) - c->p->start_ns);
}

int trace_clip(const struct tctx *c, int64_t *s, int64_t *e)
{
	if (*e < *s)
		*e = *s;
	if (*s == *e)
		return *s >= c->ws && *s <= c->we;
	if (*e <= c->ws || *s >= c->we)
		return 0;
	if (*s < c->ws)
		*s = c->ws;
	if (*e > c->we)
		*e = c->we;
	return 1;
}

static int same_host(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

int trace_pids(struct tctx *c)
{
	const struct profile *p = c->p;
	uint32_t next = 1;
	size_t q, r;
	int multi = 0;

	for (q = 1; q < p->nprocesses && !multi; q++)
		multi = !same_host(p->processes[q].rank.host, p->processes[0].rank.host);
	if (!multi)
		return 0;
	c->pid_of = calloc(p->nprocesses, sizeof(*c->pid_of));
	if (!c->pid_of)
		return -1;
	for (q = 0; q < p->nprocesses; q++) {
		for (r = 0; r < q; r++)
			if (p->processes[r].pid == p->processes[q].pid &&
			    same_host(p->processes[r].rank.host, p->processes[q].rank.host))
				break;
		c->pid_of[q] = r < q ? c->pid_of[r] : next++;
	}
	return 0;
}

uint32_t trace_pid(const struct tctx *c, uint32_t proc)
{
	if (proc >= c->p->nprocesses)
		return 0;
	return c->pid_of ? c->pid_of[proc] : c->p->processes[proc].pid;
}

void trace_thread_id(const struct tctx *c, uint32_t thr, uint32_t proc, uint32_t *pid,
                     uint32_t *tid)
{
	const struct profile *p = c->p;

	if (thr != PROF_NONE && thr < p->nthreads) {
		uint32_t tp = p->threads[thr].process;

		*pid = trace_pid(c, tp);
		*tid = p->threads[thr].tid;
	} else {
		*pid = trace_pid(c, proc);
		*tid = 0;
	}
	*tid &= (1u << TRACE_SLOT_SHIFT) - 1;
}

uint32_t trace_lane_index(uint8_t kind, uint8_t slot)
{
	switch (kind) {
	case LANE_API:
		return TRACE_MAX_SLOTS + slot;
	case LANE_RANGE:
		return 2 * TRACE_MAX_SLOTS + slot;
	case LANE_STEP:
		return 4 * TRACE_MAX_SLOTS + slot;
	case LANE_CAPTURE:
		return 5 * TRACE_MAX_SLOTS + slot;
	default:
		return slot;
	}
}

uint32_t trace_lane_tid(const struct tev *e)
{
	return e->tid + (trace_lane_index(e->kind, e->slot) << TRACE_SLOT_SHIFT);
}
