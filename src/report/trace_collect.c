/*
 * trace_collect.c — the trace's events other than CPU samples, read from the
 * profile and the analysis: CUDA API calls, annotations and GPU work (with
 * their GPU pids), steps and capture windows, off-CPU stretches, MPI calls,
 * and the flows from a lock's release to the waiter it woke.
 */
#include "cbn_mpi.h"
#include "steps.h"
#include "wait.h"
#include "trace_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* --- collection ---------------------------------------------------------- */

static uint32_t trace_gpu_pid(const struct tctx *c, uint32_t proc, uint32_t dev)
{
	for (size_t k = 0; k < c->ngpu_pids; k++)
		if (c->gpu_pid_proc[k] == proc && c->gpu_pid_dev[k] == dev)
			return TRACE_GPU_PID_BASE + (uint32_t)k;
	return TRACE_GPU_PID_BASE;
}

int trace_gpu_pids(struct tctx *c)
{
	const struct profile *p = c->p;

	c->gpu_pid_proc = calloc(p->ngpu_ops + 1, sizeof(uint32_t));
	c->gpu_pid_dev = calloc(p->ngpu_ops + 1, sizeof(uint32_t));
	if (!c->gpu_pid_proc || !c->gpu_pid_dev)
		return -ENOMEM;
	for (size_t i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *g = &p->gpu_ops[i];
		size_t k;

		for (k = 0; k < c->ngpu_pids; k++)
			if (c->gpu_pid_proc[k] == g->process && c->gpu_pid_dev[k] == g->device)
				break;
		if (k == c->ngpu_pids) {
			c->gpu_pid_proc[k] = g->process;
			c->gpu_pid_dev[k] = g->device;
			c->ngpu_pids++;
		}
	}
	return 0;
}

int trace_collect_cuda(struct tctx *c, struct tvec *out)
{
	const struct profile *p = c->p;
	struct tev e;

	for (size_t i = 0; i < p->ncuda_api; i++) {
		const struct prof_cuda_api *a = &p->cuda_api[i];

		memset(&e, 0, sizeof(e));
		e.ts = trace_rel(c, a->process, a->start);
		int64_t end = trace_rel(c, a->process, a->end);

		if (!trace_clip(c, &e.ts, &end))
			continue;
		e.dur = end - e.ts;
		trace_thread_id(c, a->thread, a->process, &e.pid, &e.tid);
		e.thr = a->thread;
		e.ref = (uint32_t)i;
		e.type = TEV_API;
		e.kind = LANE_API;
		if (tvec_push(out, &e))
			return -ENOMEM;
	}
	for (size_t i = 0; i < p->nranges; i++) {
		const struct prof_range *r = &p->ranges[i];
		int instant = r->kind == CBN_RANGE_MARK || r->kind == CBN_RANGE_STEP;

		memset(&e, 0, sizeof(e));
		e.ts = trace_rel(c, r->process, r->start);
		int64_t end = instant ? e.ts : trace_rel(c, r->process, r->end);

		if (!trace_clip(c, &e.ts, &end))
			continue;
		e.dur = end - e.ts;
		trace_thread_id(c, r->thread, r->process, &e.pid, &e.tid);
		e.thr = r->thread;
		e.ref = (uint32_t)i;
		e.type = instant ? TEV_MARK : TEV_RANGE;
		e.kind = LANE_RANGE;
		if (tvec_push(out, &e))
			return -ENOMEM;
	}
	for (size_t i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *g = &p->gpu_ops[i];

		memset(&e, 0, sizeof(e));
		e.ts = trace_rel(c, g->process, g->start);
		int64_t end = trace_rel(c, g->process, g->end);

		if (!trace_clip(c, &e.ts, &end))
			continue;
		e.dur = end - e.ts;
		e.pid = trace_gpu_pid(c, g->process, g->device);
		e.tid = g->stream & ((1u << TRACE_SLOT_SHIFT) - 1);
		e.thr = PROF_NONE;
		e.ref = (uint32_t)i;
		e.type = TEV_GPU;
		e.kind = LANE_GPU;
		if (tvec_push(out, &e))
			return -ENOMEM;
	}
	return 0;
}

/*
 * Steps as Kineto draws them: one "ProfilerStep#N" slice each (cat
 * user_annotation), on a lane of its own in the step's process, its base tid
 * the main thread's (tid == pid), so Perfetto shows it with the process.
 * Capture windows go on a "Capture" lane, only when the process used capture
 * controls (without them the one window is the whole process: noise).
 */
/* One slice of [start, end) (absolute ns) on a lane, clipped to the window;
 * nothing when it falls outside.  The one emitter of the steps, capture and
 * off-CPU slices. */
static int trace_push_slice(struct tctx *c, struct tvec *out, uint32_t proc, uint64_t start,
                            uint64_t end, uint32_t pid, uint32_t tid, uint32_t thr, uint32_t ref,
                            uint8_t type, uint8_t kind)
{
	struct tev e;
	int64_t rs = trace_rel(c, proc, start), re = trace_rel(c, proc, end);

	if (!trace_clip(c, &rs, &re))
		return 0;
	memset(&e, 0, sizeof(e));
	e.ts = rs;
	e.dur = re - rs;
	e.pid = pid;
	e.tid = tid & ((1u << TRACE_SLOT_SHIFT) - 1);
	e.thr = thr;
	e.ref = ref;
	e.type = type;
	e.kind = kind;
	return tvec_push(out, &e) ? -ENOMEM : 0;
}

int trace_collect_steps(struct tctx *c, struct tvec *out)
{
	const struct profile *p = c->p;
	const struct step_analysis *s = c->steps;

	for (size_t i = 0; s && i < s->nsteps; i++) {
		const struct step *st = &s->steps[i];
		uint32_t pid;

		if (st->process >= p->nprocesses)
			continue;
		pid = trace_pid(c, st->process);
		if (trace_push_slice(c, out, st->process, st->start, st->end, pid, pid, PROF_NONE, (uint32_t)i,
		                     TEV_STEP, LANE_STEP))
			return -ENOMEM;
	}
	for (size_t i = 0; i < p->nwindows; i++) {
		const struct prof_window *w = &p->windows[i];
		uint32_t pid;

		if (w->process >= p->nprocesses ||
		    p->processes[w->process].capture.mode == CBN_CAPTURE_ALL)
			continue;
		pid = trace_pid(c, w->process);
		if (trace_push_slice(c, out, w->process, w->start, w->end, pid, pid, PROF_NONE, (uint32_t)i,
		                     TEV_CAPTURE, LANE_CAPTURE))
			return -ENOMEM;
	}
	return 0;
}

int trace_collect_offcpu(struct tctx *c, struct tvec *out)
{
	const struct profile *p = c->p;
	size_t n = c->wait ? c->wait->nstretches : 0;

	for (size_t i = 0; i < n; i++) {
		const struct wait_stretch *o = &c->wait->stretches[i];
		uint32_t pid, tid;

		if (o->thread >= p->nthreads || o->end <= o->start)
			continue;
		trace_thread_id(c, o->thread, o->process, &pid, &tid);
		if (trace_push_slice(c, out, o->process, o->start, o->end, pid, tid, o->thread, (uint32_t)i,
		                     TEV_OFFCPU, LANE_CPU))
			return -ENOMEM;
	}
	return 0;
}

int trace_collect_mpi(struct tctx *c, struct tvec *out)
{
	const struct profile *p = c->p;

	for (size_t i = 0; i < p->nmpi_calls; i++) {
		const struct prof_mpi_call *m = &p->mpi_calls[i];
		uint32_t pid, tid;

		if (!cbn_mpi_call_name(m->call))
			continue;
		trace_thread_id(c, m->thread, m->process, &pid, &tid);
		if (trace_push_slice(c, out, m->process, m->start, m->end, pid, tid, m->thread,
		                     (uint32_t)i, TEV_MPI, LANE_API))
			return -ENOMEM;
	}
	return 0;
}

int trace_add_lock_flows(struct tctx *c, struct tvec *t)
{
	size_t n = t->n;

	for (size_t i = 0; i < n; i++) {
		const struct wait_stretch *o;
		struct tev s, f;
		uint32_t pid, tid;

		if (t->v[i].type != TEV_OFFCPU || !c->wait || t->v[i].ref >= c->wait->nstretches)
			continue;
		o = &c->wait->stretches[t->v[i].ref];
		if (o->holder == PROF_NONE || t->v[i].dur <= 0)
			continue;
		s = t->v[i];
		s.type = TEV_LOCK_S;
		s.ts = t->v[i].ts + t->v[i].dur - 1;
		s.dur = 0;
		s.flow = (1ull << 51) | t->v[i].ref;
		trace_thread_id(c, o->holder, o->process, &pid, &tid);
		memset(&f, 0, sizeof(f));
		f.type = TEV_LOCK_F;
		f.pid = pid;
		f.tid = tid;
		f.thr = o->holder;
		f.kind = LANE_CPU;
		f.ts = s.ts;
		f.flow = s.flow;
		f.ref = t->v[i].ref;
		if (tvec_push(t, &s) || tvec_push(t, &f))
			return -ENOMEM;
	}
	return 0;
}
