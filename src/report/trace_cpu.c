/*
 * trace_cpu.c — the trace's CPU lanes: the slices of each thread's frames
 * (analysis/cpu/cpu_lanes.h walks them) inside the window, and the plan that
 * cuts every thread at the same time when they would pass the size cap.
 */
#include "util.h"
#include "trace_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A walk of the CPU lanes into a trace's events. */
struct cpu_collect {
	struct tctx *c;
	struct tvec *out;
	struct tev proto;        /* the lane of proto.thr */
};

static int trace_cpu_slice(void *ctx, const struct cpu_slice *s)
{
	struct cpu_collect *k = ctx;
	struct tctx *c = k->c;
	struct tev e;
	int64_t end = s->end;

	if (s->thread != k->proto.thr) {
		k->proto.thr = s->thread;
		trace_thread_id(c, s->thread, c->p->threads[s->thread].process, &k->proto.pid,
		                &k->proto.tid);
	}
	e = k->proto;
	e.ts = s->start;
	if (!trace_clip(c, &e.ts, &end) || e.ts >= c->cpu_cut)
		return 0;
	if (c->hist) {
		c->hist[(e.ts - c->hist_lo) / c->hist_width]++;
		return 0;
	}
	if (k->out->n >= c->cpu_limit) {
		c->cpu_limited = 1;
		return 0;
	}
	e.dur = end - e.ts;
	e.ref = s->func;
	e.inlined = s->inlined;
	e.depth = (uint16_t)(s->depth > UINT16_MAX ? UINT16_MAX : s->depth);
	return tvec_push(k->out, &e) ? -ENOMEM : 0;
}

int trace_collect_cpu(struct tctx *c, struct tvec *out)
{
	struct cpu_collect k = {c, out, {0}};

	k.proto.type = TEV_SAMPLE;
	k.proto.kind = LANE_CPU;
	k.proto.thr = PROF_NONE;
	return cpu_lanes_walk(c->p, trace_cpu_slice, &k);
}

#define TRACE_HIST_BUCKETS 4096

int trace_plan_cpu(struct tctx *c)
{
	uint64_t bound, sum = 0;
	int64_t hi, last;
	struct tvec none = {0};
	int rc;

	c->cpu_cut = INT64_MAX;
	cpu_lanes_extent(c->p, &bound, &last);
	if (bound <= c->cpu_limit)
		return 0;
	hi = last > c->ws + 1 ? last : c->ws + 1;
	if (hi > c->we)
		hi = c->we;
	c->hist_lo = c->ws;
	c->hist_width = (hi - c->ws) / TRACE_HIST_BUCKETS + 1;
	c->hist = calloc(TRACE_HIST_BUCKETS + 1, sizeof(*c->hist));
	if (!c->hist)
		return -ENOMEM;
	rc = trace_collect_cpu(c, &none);
	for (size_t k = 0; !rc && k <= TRACE_HIST_BUCKETS; k++) {
		if (sum + c->hist[k] > c->cpu_limit && c->cpu_cut == INT64_MAX)
			c->cpu_cut = c->hist_lo + (int64_t)k * c->hist_width;
		sum += c->hist[k];
	}
	c->cpu_total = (size_t)sum;
	free(c->hist);
	c->hist = NULL;
	return rc;
}
