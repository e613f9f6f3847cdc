/*
 * trace.c — --trace FILE[.gz]: the Chrome trace-event JSON that Perfetto and
 * chrome://tracing open.  CPU lanes are rebuilt from samples; CUDA API calls,
 * annotations and GPU work get lanes of their own; every lane strictly nests.
 * Memory spaces (host per process, GPU per device) become counter tracks.
 * Steps become ProfilerStep#N slices on a "Steps" lane of their process, and
 * capture windows slices on a "Capture" lane, when the run used controls.
 * Layout, flows and the size cap are documented in docs/outputs.md.
 */
#include "../format/cbn_mpi.h"
#include "analysis.h"
#include "export.h"
#include "gz.h"
#include "memory.h"
#include "ops.h"
#include "steps.h"
#include "steps_json.h"
#include "util.h"
#include "wait.h"
#include "wait_report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_DEFAULT_CAP (256ull << 20)
#define TRACE_MAX_SLOTS 16  /* one lane plus 15 overflow lanes */
#define TRACE_SLOT_SHIFT 23 /* tids and pids stay below 2^22 (pid_max limit) */
#define TRACE_GPU_PID_BASE (1u << 24)
/* tid of the memory counter events: past every lane's (counters belong to
 * their process in viewers; the tid only keeps them off the thread lanes) */
#define TRACE_COUNTER_TID (48u << TRACE_SLOT_SHIFT)

/* flows last: cmp_emit_order() tells them by type >= TEV_FLOW_S */
enum tev_type {
	TEV_SAMPLE, TEV_API, TEV_RANGE, TEV_MARK, TEV_GPU, TEV_STEP, TEV_CAPTURE, TEV_OFFCPU,
	TEV_MPI,
	TEV_FLOW_S, TEV_FLOW_F, TEV_LOCK_S, TEV_LOCK_F
};
enum tev_lane { LANE_CPU, LANE_API, LANE_RANGE, LANE_GPU, LANE_STEP, LANE_CAPTURE };

/* One event before it is written; times are ns relative to the profile start,
 * already clipped to the window. */
struct tev {
	int64_t ts, dur;
	uint32_t pid, tid; /* JSON pid and the lane's base tid */
	uint32_t ref;      /* func, api, range or gpu op index */
	uint32_t thr;      /* thread index for lane names, PROF_NONE */
	uint64_t flow;     /* flow id (flows only) */
	uint16_t depth;    /* stack depth of a sample slice, root 0 */
	uint8_t type, kind, slot;
	uint8_t inlined;   /* a sample slice of an inlined frame */
};

struct tvec {
	struct tev *v;
	size_t n, cap;
};

/* A growable string: one event is formatted here before it is written, so the
 * size cap can be checked against its real length. */
struct sbuf {
	char *p;
	size_t n, cap;
	int oom;
};

struct lane {
	uint32_t pid, tid, thr;
	uint8_t kind, slot;
};

struct tctx {
	const struct profile *p;
	const struct mem_analysis *mem; /* NULL: no memory data */
	const struct step_analysis *steps; /* NULL: no steps */
	const struct op_analysis *ops;     /* NULL: no operators */
	int64_t ws, we;         /* window, relative ns */
	uint32_t *gpu_pid_proc; /* synthetic GPU pid k -> process index */
	uint32_t *gpu_pid_dev;  /* ... and device */
	size_t ngpu_pids;
	size_t cpu_limit; /* most CPU slices worth building */
	int cpu_limited;  /* hit the limit: cannot happen after trace_plan_cpu() */
	int64_t cpu_cut;  /* CPU slices starting at or after this are not built */
	size_t cpu_total; /* all CPU slices, from the counting pass (0 if none) */
	uint64_t *hist;   /* counting pass: slice starts per time bucket */
	int64_t hist_lo, hist_width;
	struct lane *lanes; /* every (lane, slot) that has events */
	size_t nlanes, cap_lanes;
	int has_ranks;      /* a process is a rank: groups named and sorted by rank */
	uint32_t *pid_of;   /* trace pid per process (trace_pids), NULL: their own */
};

static int tvec_push(struct tvec *t, const struct tev *e)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct tev *v = util_reallocarray(t->v, cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = *e;
	return 0;
}

static void sb_grow(struct sbuf *b, size_t more)
{
	if (b->oom || b->n + more + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;

	while (cap < b->n + more + 1)
		cap *= 2;
	char *p = realloc(b->p, cap);

	if (!p) {
		b->oom = 1;
		return;
	}
	b->p = p;
	b->cap = cap;
}

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
	sb_grow(b, n);
	if (b->oom)
		return;
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void sb_puts(struct sbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

__attribute__((format(printf, 2, 3))) static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	sb_grow(b, (size_t)n);
	if (b->oom)
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->n += (size_t)n;
}

/* Length of the valid UTF-8 sequence at s, or 0 when it is not one
 * (overlong forms, surrogates and code points above U+10FFFF are invalid). */
static size_t utf8_seq(const unsigned char *s)
{
	unsigned c = s[0];
	size_t n;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

/* The one JSON string writer: quotes, backslashes and control characters are
 * escaped, valid UTF-8 passes through, invalid bytes become U+FFFD, so any
 * name (kineto #888: a ']' broke their splicing) gives valid JSON. */
static void sb_json_str(struct sbuf *b, const char *s)
{
	const unsigned char *u = (const unsigned char *)(s ? s : "");

	sb_put(b, "\"", 1);
	while (*u) {
		size_t run = 0;

		/* copy the longest run that needs no escaping in one go */
		while (u[run] >= 0x20 && u[run] < 0x80 && u[run] != '"' && u[run] != '\\')
			run++;
		if (run) {
			sb_put(b, (const char *)u, run);
			u += run;
			continue;
		}
		if (*u == '"' || *u == '\\') {
			char e[2] = {'\\', (char)*u};

			sb_put(b, e, 2);
			u++;
		} else if (*u < 0x20) {
			switch (*u) {
			case '\n':
				sb_put(b, "\\n", 2);
				break;
			case '\t':
				sb_put(b, "\\t", 2);
				break;
			case '\r':
				sb_put(b, "\\r", 2);
				break;
			default:
				sb_printf(b, "\\u%04x", *u);
				break;
			}
			u++;
		} else {
			size_t n = utf8_seq(u);

			if (n) {
				sb_put(b, (const char *)u, n);
				u += n;
			} else {
				sb_put(b, "\\ufffd", 6);
				u++;
			}
		}
	}
	sb_put(b, "\"", 1);
}

/* Decimal digits of v (no printf: millions of events go through here). */
static void sb_u64(struct sbuf *b, uint64_t v)
{
	char d[24];
	size_t n = sizeof(d);

	do {
		d[--n] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	sb_put(b, d + n, sizeof(d) - n);
}

/* ns -> µs with ns precision, exact (no floating point on the way). */
static void sb_us(struct sbuf *b, int64_t ns)
{
	uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	char frac[4] = {'.', (char)('0' + u / 100 % 10), (char)('0' + u / 10 % 10),
	                (char)('0' + u % 10)};

	if (ns < 0)
		sb_put(b, "-", 1);
	sb_u64(b, u / 1000);
	sb_put(b, frac, 4);
}

/* ts of process proc (PROF_NONE: none known) relative to the run's start;
 * the ranks of a distributed run through their clock alignment, so every
 * rank is on one timeline (docs/distributed.md). */
static int64_t trace_rel(const struct tctx *c, uint32_t proc, uint64_t ts)
{
	return (int64_t)(prof_rank_time(c->p, proc, ts) - c->p->start_ns);
}

/* Clip [*s, *e] to the window.  0 when nothing of it is left; instants
 * (s == e) are kept when they lie inside. */
static int trace_clip(const struct tctx *c, int64_t *s, int64_t *e)
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

/*
 * The trace pid of each process: its own pid, except in a run over several
 * hosts, where processes of two hosts may share one (a rank each, in one
 * group, was what came of it): there each (host, pid) is numbered from 1,
 * and the group's name still says the real pid.  Exec images of one process
 * keep one pid, as on one host.
 */
static int trace_pids(struct tctx *c)
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

static uint32_t trace_pid(const struct tctx *c, uint32_t proc)
{
	if (proc >= c->p->nprocesses)
		return 0;
	return c->pid_of ? c->pid_of[proc] : c->p->processes[proc].pid;
}

/* Lane identity of a thread index (pid, tid); unknown threads of process
 * proc get tid 0, named "unknown thread". */
static void trace_thread_id(const struct tctx *c, uint32_t thr, uint32_t proc, uint32_t *pid,
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

/* JSON tid of a lane: the base tid plus the lane kind and overflow slot in the
 * high bits, so a thread's CPU, CUDA API and annotation lanes are separate
 * tracks that never collide with a real tid.  GPU pids are synthetic, so their
 * stream lanes keep the stream id as tid.  The Steps and Capture lanes of a
 * process sit past the memory counters' index (TRACE_COUNTER_TID). */
static uint32_t lane_index(uint8_t kind, uint8_t slot)
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

static uint32_t lane_tid(const struct tev *e)
{
	return e->tid + (lane_index(e->kind, e->slot) << TRACE_SLOT_SHIFT);
}

/* --- collection ---------------------------------------------------------- */

static uint32_t trace_gpu_pid(const struct tctx *c, uint32_t proc, uint32_t dev)
{
	for (size_t k = 0; k < c->ngpu_pids; k++)
		if (c->gpu_pid_proc[k] == proc && c->gpu_pid_dev[k] == dev)
			return TRACE_GPU_PID_BASE + (uint32_t)k;
	return TRACE_GPU_PID_BASE;
}

static int trace_gpu_pids(struct tctx *c)
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

/* CUDA API calls, annotation ranges and GPU operations. */
static int trace_collect_cuda(struct tctx *c, struct tvec *out)
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

static int trace_collect_steps(struct tctx *c, struct tvec *out)
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

/* Off-CPU stretches (--off-cpu) as slices on their thread's CPU lane, where
 * the samples leave a gap: the slot assignment moves one that overlaps a
 * sample slice to an overflow lane. */
static int trace_collect_offcpu(struct tctx *c, struct tvec *out)
{
	const struct profile *p = c->p;

	for (size_t i = 0; i < p->noffcpu; i++) {
		const struct prof_offcpu *o = &p->offcpu[i];
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

/* MPI calls (libcbottleneck_mpi.so) as slices on their thread's API lane,
 * cat "mpi", so a rank's waits in collectives line up across the ranks. */
static int trace_collect_mpi(struct tctx *c, struct tvec *out)
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

/* A wait in a mutex lock whose owner is known: the blocking call names a lock
 * (pthread_mutex_lock, __lll_lock_wait, std::mutex::lock). */
static int trace_is_lock_wait(const struct profile *p, const struct prof_offcpu *o)
{
	const char *call;

	if (o->kind != CBN_OFF_FUTEX || o->owner_thread == PROF_NONE ||
	    o->owner_thread >= p->nthreads || o->owner_thread == o->thread)
		return 0;
	call = wait_stack_call(p, o->stack);
	return call && strstr(call, "lock") != NULL;
}

/* Lock waits as flows from the waiter's off-CPU slice to the holder's CPU
 * lane at the wait's end ("f" binds to the holder's enclosing slice there,
 * "bp":"e"); ids 2^51 + the stretch's index, apart from the CUDA flows' (exact
 * in a double, as JSON readers hold them). */
static int trace_add_lock_flows(struct tctx *c, struct tvec *t)
{
	const struct profile *p = c->p;
	size_t n = t->n;

	for (size_t i = 0; i < n; i++) {
		const struct prof_offcpu *o;
		struct tev s, f;
		uint32_t pid, tid;

		if (t->v[i].type != TEV_OFFCPU || t->v[i].ref >= p->noffcpu)
			continue;
		o = &p->offcpu[t->v[i].ref];
		if (!trace_is_lock_wait(p, o) || t->v[i].dur <= 0)
			continue;
		s = t->v[i];
		s.type = TEV_LOCK_S;
		s.ts = t->v[i].ts + t->v[i].dur - 1;
		s.dur = 0;
		s.flow = (1ull << 51) | t->v[i].ref;
		trace_thread_id(c, o->owner_thread, o->process, &pid, &tid);
		memset(&f, 0, sizeof(f));
		f.type = TEV_LOCK_F;
		f.pid = pid;
		f.tid = tid;
		f.thr = o->owner_thread;
		f.kind = LANE_CPU;
		f.ts = s.ts;
		f.flow = s.flow;
		f.ref = t->v[i].ref;
		if (tvec_push(t, &s) || tvec_push(t, &f))
			return -ENOMEM;
	}
	return 0;
}

static int cmp_sample_idx(const void *a, const void *b, void *arg)
{
	const struct profile *prof = arg;
	const struct prof_sample *x = &prof->samples[*(const uint32_t *)a];
	const struct prof_sample *y = &prof->samples[*(const uint32_t *)b];

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

struct open_frame {
	uint32_t func;
	int inlined;
	int64_t start;
};

/* Close open frames [from, *nopen) at time at, deepest first. */
static int trace_close(struct tctx *c, struct tvec *out, struct open_frame *st, size_t *nopen,
                       size_t from, int64_t at, const struct tev *proto)
{
	while (*nopen > from) {
		struct open_frame *o = &st[--*nopen];
		struct tev e = *proto;
		int64_t end = at;

		e.ts = o->start;
		if (end <= e.ts || !trace_clip(c, &e.ts, &end) || e.ts >= c->cpu_cut)
			continue;
		if (c->hist) {
			c->hist[(e.ts - c->hist_lo) / c->hist_width]++;
			continue;
		}
		if (out->n >= c->cpu_limit) {
			c->cpu_limited = 1;
			continue;
		}
		e.dur = end - e.ts;
		e.ref = o->func;
		e.inlined = (uint8_t)o->inlined;
		e.depth = (uint16_t)(*nopen > UINT16_MAX ? UINT16_MAX : *nopen);
		if (tvec_push(out, &e))
			return -ENOMEM;
	}
	return 0;
}

#define TRACE_FUNC_TRUNCATED (UINT32_MAX - 1)

/* Function at depth d (root 0) of a stack of n frames, the first of them the
 * "[truncated]" marker when trunc. */
static uint32_t trace_func_at(const struct profile *p, const struct prof_stack *sk, size_t n,
                              size_t trunc, size_t d)
{
	if (trunc && d == 0)
		return TRACE_FUNC_TRUNCATED;
	return p->frames[sk->first + n - 1 - d].func;
}

static int trace_inlined_at(const struct profile *p, const struct prof_stack *sk, size_t n,
                            size_t trunc, size_t d)
{
	return !(trunc && d == 0) && p->frames[sk->first + n - 1 - d].inlined;
}

/*
 * CPU lanes from samples.  A sample stamped ts with weight w covers
 * [ts - w*period, ts]: the timer fired after that much CPU time.  Consecutive
 * samples of a thread are joined when the gap between them is at most one
 * period (timer jitter); a longer gap means the thread was off CPU, and every
 * open frame closes.  Frames common (root first, by function) with the
 * previous sample stay open; the rest close and the new ones open.
 */
static int trace_collect_cpu(struct tctx *c, struct tvec *out)
{
	const struct profile *p = c->p;
	uint32_t *idx = NULL;
	struct open_frame *st = NULL;
	size_t maxdepth = 0, i = 0;
	int rc = 0;

	if (!p->nsamples)
		return 0;
	idx = util_reallocarray(NULL, p->nsamples, sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (size_t k = 0; k < p->nsamples; k++) {
		idx[k] = (uint32_t)k;
		if (p->samples[k].stack < p->nstacks &&
		    p->stacks[p->samples[k].stack].nframes > maxdepth)
			maxdepth = p->stacks[p->samples[k].stack].nframes;
	}
	st = util_reallocarray(NULL, maxdepth + 2, sizeof(*st));
	if (!st) {
		rc = -ENOMEM;
		goto out;
	}
	qsort_r(idx, p->nsamples, sizeof(*idx), cmp_sample_idx, (void *)p);

	while (i < p->nsamples) {
		uint32_t thr = p->samples[idx[i]].thread;
		struct tev proto;
		size_t nopen = 0;
		int64_t last_end = INT64_MIN;
		uint64_t period = 0;

		memset(&proto, 0, sizeof(proto));
		proto.type = TEV_SAMPLE;
		proto.kind = LANE_CPU;
		proto.thr = thr < p->nthreads ? thr : PROF_NONE;
		if (thr < p->nthreads) {
			uint32_t proc = p->threads[thr].process;

			trace_thread_id(c, thr, proc, &proto.pid, &proto.tid);
		}
		period = prof_period_of_thread(p, thr);
		/* No period known at all (every time figure is then 0): still
		 * give each sample a visible width on the timeline. */
		if (!period)
			period = 1000000;

		for (; i < p->nsamples && p->samples[idx[i]].thread == thr; i++) {
			const struct prof_sample *s = &p->samples[idx[i]];
			int64_t end = trace_rel(c, thr < p->nthreads ? p->threads[thr].process
								   : PROF_NONE, s->ts);
			int64_t start =
			    end - (int64_t)(s->weight ? s->weight : 1) * (int64_t)period;
			const struct prof_stack *sk =
			    s->stack < p->nstacks ? &p->stacks[s->stack] : NULL;
			/* a stack cut at max_depth lacks its root: it goes under
			 * a "[truncated]" frame instead of posing as a root */
			size_t trunc =
			    (s->flags & CBN_SAMPLE_TRUNCATED) && sk && sk->nframes ? 1 : 0;
			size_t n = (sk ? sk->nframes : 0) + trunc, k = 0;

			if (thr >= p->nthreads)
				break;
			if (last_end != INT64_MIN) {
				if (start <= last_end + (int64_t)period) {
					start = last_end;
				} else {
					rc = trace_close(c, out, st, &nopen, 0, last_end, &proto);
					if (rc)
						goto out;
				}
			}
			if (end <= start)
				continue;
			/* frames[first] is the leaf; depth d is frames[first + n - 1 - d] */
			while (k < n && k < nopen &&
			       trace_func_at(p, sk, n, trunc, k) == st[k].func &&
			       trace_inlined_at(p, sk, n, trunc, k) == st[k].inlined)
				k++;
			rc = trace_close(c, out, st, &nopen, k, start, &proto);
			if (rc)
				goto out;
			for (; k < n; k++) {
				st[nopen].func = trace_func_at(p, sk, n, trunc, k);
				st[nopen].inlined = trace_inlined_at(p, sk, n, trunc, k);
				st[nopen].start = start;
				nopen++;
			}
			last_end = end;
		}
		rc = trace_close(c, out, st, &nopen, 0, last_end, &proto);
		if (rc)
			goto out;
		/* samples of an unknown thread index cannot be placed */
		while (i < p->nsamples && p->samples[idx[i]].thread == thr)
			i++;
	}
out:
	free(st);
	free(idx);
	return rc;
}

#define TRACE_HIST_BUCKETS 4096

/*
 * When the samples could make more slices than the size cap can hold, find
 * the time before which they fit (a counting pass over the same algorithm,
 * into a histogram of slice starts), so that every thread is cut at the same
 * time rather than the last threads losing everything.
 */
static int trace_plan_cpu(struct tctx *c)
{
	const struct profile *p = c->p;
	uint64_t bound = 0, sum = 0;
	int64_t hi = c->ws + 1;
	struct tvec none = {0};
	int rc;

	c->cpu_cut = INT64_MAX;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		int64_t t = trace_rel(c, s->thread < p->nthreads ? p->threads[s->thread].process
								 : PROF_NONE, s->ts);

		if (s->stack < p->nstacks)
			bound += p->stacks[s->stack].nframes + 1; /* + "[truncated]" */
		if (t > hi)
			hi = t;
	}
	if (bound <= c->cpu_limit)
		return 0;
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

static int cmp_lane(const void *a, const void *b)
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

static int trace_assign_slots(struct tctx *c, struct tvec *t)
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

/* Emission order: by time; at equal times slices before the flows bound to
 * them, longer (outer) slices first, then shallower frames. */
static int cmp_emit_order(const void *a, const void *b)
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
	if (lane_tid(x) != lane_tid(y))
		return lane_tid(x) < lane_tid(y) ? -1 : 1;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	return x->ref < y->ref ? -1 : x->ref > y->ref;
}

/* Flow arrows launch -> GPU op, kineto's "ac2g" convention: "s" at the start
 * of the API slice (binds to the enclosing slice, i.e. the call), "f" with
 * "bp":"e" at the start of the GPU op (binds to the op itself).  Both ends
 * must be in the trace.  Ids: correlation ids are per process, so the process
 * index goes in the high 32 bits (process 0 keeps the plain correlation id);
 * a flow id pairs one s with one f, so when one call launched several ops (a
 * CUDA graph) the arrows after the first get ids 2^52 + op index. */
static int trace_add_flows(struct tctx *c, struct tvec *t)
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

/* --- writing ------------------------------------------------------------- */

static const char *gpu_cat(uint32_t kind)
{
	switch (kind) {
	case PROF_GPU_MEMCPY:
		return "gpu_memcpy";
	case PROF_GPU_MEMSET:
		return "gpu_memset";
	default:
		return "kernel";
	}
}

static const struct prof_cuda_device *trace_device(const struct profile *p, uint32_t proc,
                                                   uint32_t id)
{
	for (size_t i = 0; i < p->ndevices; i++)
		if (p->devices[i].process == proc && p->devices[i].id == id)
			return &p->devices[i];
	for (size_t i = 0; i < p->ndevices; i++)
		if (p->devices[i].id == id)
			return &p->devices[i];
	return NULL;
}

/* ,"op":"aten::addmm": the operator innermost on API call api's launch
 * stack (ops.h), nothing when there is none. */
static void trace_op_arg(const struct tctx *c, struct sbuf *b, uint32_t api)
{
	if (!c->ops || api >= c->p->ncuda_api || c->ops->api_op[api] == OPS_NONE)
		return;
	sb_puts(b, ",\"op\":");
	sb_json_str(b, c->ops->rows[c->ops->api_op[api]].name);
}

static void trace_gpu_args(const struct tctx *c, struct sbuf *b, const struct prof_gpu_op *g)
{
	const struct profile *p = c->p;

	sb_printf(b,
	          ",\"args\":{\"device\":%" PRIu32 ",\"context\":%" PRIu32 ",\"stream\":%" PRIu32
	          ",\"correlation\":%" PRIu32,
	          g->device, g->context, g->stream, g->correlation);
	if (g->kind == PROF_GPU_KERNEL) {
		const struct prof_cuda_device *d = trace_device(p, g->process, g->device);
		double blocks = (double)g->grid[0] * g->grid[1] * g->grid[2];
		double threads = (double)g->block[0] * g->block[1] * g->block[2];

		sb_printf(b,
		          ",\"registers per thread\":%" PRIu32 ",\"shared memory\":%" PRId64
		          ",\"grid\":[%" PRId32 ",%" PRId32 ",%" PRId32 "],\"block\":[%" PRId32
		          ",%" PRId32 ",%" PRId32 "]",
		          g->registers, (int64_t)g->static_smem + g->dynamic_smem, g->grid[0],
		          g->grid[1], g->grid[2], g->block[0], g->block[1], g->block[2]);
		if (d && d->sm_count) {
			double warps = blocks * (double)((uint64_t)(threads + 31) / 32);

			sb_printf(b, ",\"blocks per SM\":%.2f,\"warps per SM\":%.2f",
			          blocks / d->sm_count, warps / d->sm_count);
		}
		if (g->graph_id)
			sb_printf(b, ",\"graph id\":%" PRIu32 ",\"graph node id\":%" PRIu64,
			          g->graph_id, g->graph_node_id);
	} else {
		uint64_t dur = g->end > g->start ? g->end - g->start : 0;

		sb_printf(b, ",\"bytes\":%" PRIu64, g->bytes);
		if (dur)
			sb_printf(b, ",\"memory bandwidth (GB/s)\":%.3f",
			          (double)g->bytes / (double)dur);
		if (g->kind == PROF_GPU_MEMSET)
			sb_printf(b, ",\"value\":%" PRIu32, g->value);
	}
	trace_op_arg(c, b, g->api);
	sb_puts(b, "}");
}

static void trace_format(const struct tctx *c, struct sbuf *b, const struct tev *e)
{
	const struct profile *p = c->p;

	b->n = 0;
	switch (e->type) {
	case TEV_SAMPLE:
		sb_puts(b, "{\"ph\":\"X\",\"cat\":\"cpu_sample\",\"name\":");
		if (e->inlined && e->ref < p->nfuncs) {
			char name[1024];

			snprintf(name, sizeof(name), "%s [inlined]", p->funcs[e->ref].name);
			sb_json_str(b, name);
			break;
		}
		sb_json_str(b, e->ref < p->nfuncs               ? p->funcs[e->ref].name
		               : e->ref == TRACE_FUNC_TRUNCATED ? "[truncated]"
		                                                : "[unknown]");
		break;
	case TEV_API: {
		const struct prof_cuda_api *a = &p->cuda_api[e->ref];

		sb_printf(b, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":",
		          a->domain == CBN_CUDA_DRIVER ? "cuda_driver" : "cuda_runtime");
		sb_json_str(b, a->name);
		break;
	}
	case TEV_RANGE:
	case TEV_MARK:
		sb_printf(b, "{\"ph\":\"%s\",\"cat\":\"user_annotation\",\"name\":",
		          e->type == TEV_MARK ? "i\",\"s\":\"t" : "X");
		sb_json_str(b, p->ranges[e->ref].name);
		break;
	case TEV_GPU: {
		const struct prof_gpu_op *g = &p->gpu_ops[e->ref];

		sb_printf(b, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", gpu_cat(g->kind));
		sb_json_str(b, g->name);
		break;
	}
	case TEV_STEP: {
		char name[48];

		snprintf(name, sizeof(name), "ProfilerStep#%" PRIu64, c->steps->steps[e->ref].number);
		sb_puts(b, "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":");
		sb_json_str(b, name);
		break;
	}
	case TEV_CAPTURE:
		sb_puts(b, "{\"ph\":\"X\",\"cat\":\"capture\",\"name\":\"Capture\"");
		break;
	case TEV_FLOW_S:
	case TEV_FLOW_F:
		sb_printf(b, "{\"ph\":\"%s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":%" PRIu64,
		          e->type == TEV_FLOW_S ? "s" : "f\",\"bp\":\"e", e->flow);
		break;
	case TEV_OFFCPU: {
		const struct prof_offcpu *o = &p->offcpu[e->ref];
		char name[1024];

		wait_offcpu_label(name, sizeof(name), o->kind, wait_stack_call(p, o->stack));
		sb_puts(b, "{\"ph\":\"X\",\"cat\":\"off_cpu\",\"name\":");
		sb_json_str(b, name);
		break;
	}
	case TEV_MPI:
		sb_puts(b, "{\"ph\":\"X\",\"cat\":\"mpi\",\"name\":");
		sb_json_str(b, cbn_mpi_call_name(p->mpi_calls[e->ref].call));
		break;
	case TEV_LOCK_S:
	case TEV_LOCK_F:
		sb_printf(b, "{\"ph\":\"%s\",\"cat\":\"lock\",\"name\":\"lock wait\",\"id\":%" PRIu64,
		          e->type == TEV_LOCK_S ? "s" : "f\",\"bp\":\"e", e->flow);
		break;
	}
	sb_puts(b, ",\"pid\":");
	sb_u64(b, e->pid);
	sb_puts(b, ",\"tid\":");
	sb_u64(b, lane_tid(e));
	sb_puts(b, ",\"ts\":");
	sb_us(b, e->ts);
	if (e->type != TEV_MARK && e->type < TEV_FLOW_S) {
		sb_puts(b, ",\"dur\":");
		sb_us(b, e->dur);
	}
	switch (e->type) {
	case TEV_API: {
		const struct prof_cuda_api *a = &p->cuda_api[e->ref];

		sb_printf(b, ",\"args\":{\"cbid\":%" PRIu32 ",\"correlation\":%" PRIu32, a->cbid,
		          a->correlation);
		if (a->ret)
			sb_printf(b, ",\"return\":%" PRId32, a->ret);
		trace_op_arg(c, b, e->ref);
		sb_puts(b, "}");
		break;
	}
	case TEV_RANGE:
	case TEV_MARK: {
		const struct prof_range *r = &p->ranges[e->ref];

		sb_printf(b, ",\"args\":{\"source\":\"%s\"",
		          r->source == CBN_SRC_NVTX ? "nvtx" : "annotation");
		if (r->domain && *r->domain) {
			sb_puts(b, ",\"domain\":");
			sb_json_str(b, r->domain);
		}
		if (r->kind == CBN_RANGE_STEP)
			sb_puts(b, ",\"step\":true");
		sb_puts(b, "}");
		break;
	}
	case TEV_GPU:
		trace_gpu_args(c, b, &p->gpu_ops[e->ref]);
		break;
	case TEV_MPI: {
		const struct prof_mpi_call *m = &p->mpi_calls[e->ref];

		sb_printf(b, ",\"args\":{\"bytes_sent\":%" PRIu64 ",\"bytes_recv\":%" PRIu64
		          ",\"peer\":%" PRId32 ",\"comm\":%" PRIu32 ",\"seq\":%" PRIu32 "}",
		          m->bytes_sent, m->bytes_recv, m->peer, m->comm, m->seq);
		break;
	}
	case TEV_STEP: {
		const struct step *st = &c->steps->steps[e->ref];

		sb_printf(b, ",\"args\":{\"step\":%" PRIu64 ",\"cpu_ns\":%" PRIu64
		          ",\"gpu_busy_ns\":%" PRIu64 ",\"sync_ns\":%" PRIu64 ",\"kernels\":%" PRIu32
		          ",\"copies\":%" PRIu32 "}",
		          st->number, st->cpu_ns, st->gpu_busy_ns, st->sync_ns, st->kernels,
		          st->copies);
		break;
	}
	case TEV_OFFCPU: {
		const struct prof_offcpu *o = &p->offcpu[e->ref];
		uint32_t site = wait_stack_site(p, o->stack);

		sb_printf(b, ",\"args\":{\"kind\":\"%s\",\"syscall\":%" PRId32
		          ",\"weight_ns\":%" PRIu64, wait_kind_name((int)o->kind), o->syscall,
		          o->weight_ns);
		if (site < p->nfuncs) {
			sb_puts(b, ",\"site\":");
			sb_json_str(b, p->funcs[site].name ? p->funcs[site].name : "");
		}
		if (o->addr)
			sb_printf(b, ",\"addr\":\"0x%" PRIx64 "\"", o->addr);
		if (trace_is_lock_wait(p, o))
			sb_printf(b, ",\"holder_tid\":%" PRIu32, p->threads[o->owner_thread].tid);
		sb_puts(b, "}");
		break;
	}
	case TEV_CAPTURE: {
		const struct prof_window *w = &p->windows[e->ref];

		sb_printf(b, ",\"args\":{\"open_cause\":\"%s\",\"close_cause\":\"%s\""
		          ",\"first_step\":%" PRIu64 "}",
		          steps_cause_name(w->open_cause), steps_cause_name(w->close_cause),
		          w->first_step);
		break;
	}
	default:
		break;
	}
	sb_puts(b, "}");
}

/* Emit one metadata event. */
static int trace_meta(struct gz_file *f, struct sbuf *b, const char *what, uint32_t pid,
                      uint32_t tid, int with_tid, const char *name, int64_t sort)
{
	b->n = 0;
	sb_printf(b, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRIu32, what, pid);
	if (with_tid)
		sb_printf(b, ",\"tid\":%" PRIu32, tid);
	if (name) {
		sb_puts(b, ",\"args\":{\"name\":");
		sb_json_str(b, name);
		sb_puts(b, "}},\n");
	} else {
		sb_printf(b, ",\"args\":{\"sort_index\":%" PRId64 "}},\n", sort);
	}
	return b->oom ? -ENOMEM : gz_write(f, b->p, b->n);
}

/* process_name / thread_name / sort indexes for every lane that has events. */
static int trace_write_meta(const struct tctx *c, struct gz_file *f, struct sbuf *b)
{
	const struct profile *p = c->p;
	struct lane *ln = c->lanes;
	size_t n = c->nlanes;
	char name[512];
	int rc = 0;

	if (n)
		qsort(ln, n, sizeof(*ln), cmp_lane);

	uint32_t last_pid = UINT32_MAX;

	for (size_t i = 0; i < n && !rc; i++) {
		const struct lane *l = &ln[i];

		if (i && !cmp_lane(&ln[i - 1], l))
			continue;
		if (l->pid != last_pid) {
			last_pid = l->pid;
			if (l->pid >= TRACE_GPU_PID_BASE) {
				size_t k = l->pid - TRACE_GPU_PID_BASE;
				uint32_t proc = c->gpu_pid_proc[k], dev = c->gpu_pid_dev[k];
				const struct prof_cuda_device *d = trace_device(p, proc, dev);

				snprintf(name, sizeof(name),
				         "GPU %" PRIu32 "%s%s (pid %" PRIu32 ")", dev,
				         d && d->name && *d->name ? ": " : "",
				         d && d->name ? d->name : "",
				         proc < p->nprocesses ? p->processes[proc].pid : 0);
				rc = trace_meta(f, b, "process_name", l->pid, 0, 0, name, 0);
				if (!rc)
					rc = trace_meta(f, b, "process_sort_index", l->pid, 0, 0,
					                NULL, (int64_t)(1 << 20) + (int64_t)k);
			} else {
				/* exec chains share a pid: "forkexec -> split" */
				size_t len = 0;
				int64_t order = -1, rq = -1;

				name[0] = '\0';
				for (size_t q = 0; q < p->nprocesses; q++) {
					if (trace_pid(c, (uint32_t)q) != l->pid)
						continue;
					if (order < 0)
						order = (int64_t)q;
					/* under mpirun a rank is the exec'd image of a
					 * launcher's fork child: any image may be it */
					if (p->processes[q].rank.rank >= 0)
						rq = (int64_t)q;
					len += (size_t)snprintf(name + len, sizeof(name) - len,
					                        "%s%s", len ? " -> " : "",
					                        util_base_name(p->processes[q].exe));
					if (len >= sizeof(name))
						len = sizeof(name) - 1;
				}
				if (!name[0])
					snprintf(name, sizeof(name), "process %" PRIu32, l->pid);
				/* a rank of a distributed run: its group is named and
				 * sorted by rank, ahead of the processes that are none */
				if (rq >= 0) {
					const struct prof_rank_proc *rk = &p->processes[rq].rank;

					snprintf(name, sizeof(name), "rank %" PRId32 " (%s, pid %" PRIu32 ")",
					         rk->rank, rk->host && *rk->host ? rk->host : "?",
					         p->processes[rq].pid);
					order = rk->rank;
				} else if (order >= 0 && c->has_ranks) {
					order += (int64_t)1 << 19;
				}
				rc = trace_meta(f, b, "process_name", l->pid, 0, 0, name, 0);
				if (!rc)
					rc = trace_meta(f, b, "process_sort_index", l->pid, 0, 0,
					                NULL, order < 0 ? 0 : order);
			}
			if (rc)
				break;
		}

		struct tev e = {.pid = l->pid, .tid = l->tid, .kind = l->kind, .slot = l->slot};
		const char *tname = l->thr < p->nthreads ? p->threads[l->thr].name : NULL;
		char tbuf[64];
		int64_t sort = 0;

		if (!tname || !*tname) {
			if (l->kind != LANE_GPU && l->thr == PROF_NONE)
				tname = "unknown thread";
			else
				tname = tbuf;
			snprintf(tbuf, sizeof(tbuf), "thread %" PRIu32, l->tid);
		}
		switch (l->kind) {
		case LANE_GPU:
			snprintf(name, sizeof(name), "stream %" PRIu32, l->tid);
			sort = (int64_t)l->tid * TRACE_MAX_SLOTS + l->slot;
			break;
		case LANE_API:
			snprintf(name, sizeof(name), "%s cuda api", tname);
			break;
		case LANE_RANGE:
			snprintf(name, sizeof(name), "%s annotations", tname);
			break;
		case LANE_STEP:
			snprintf(name, sizeof(name), "Steps");
			break;
		case LANE_CAPTURE:
			snprintf(name, sizeof(name), "Capture");
			break;
		default:
			snprintf(name, sizeof(name), "%s", tname);
			break;
		}
		if (l->kind == LANE_STEP || l->kind == LANE_CAPTURE) {
			/* above every thread of the process, Steps first */
			sort = (l->kind == LANE_STEP ? -2 : -1) * (int64_t)TRACE_MAX_SLOTS + l->slot;
		} else if (l->kind != LANE_GPU) {
			/* a thread's lanes sit together; the main thread (tid == pid) first */
			int64_t rank = l->thr < p->nthreads ? (int64_t)l->thr + 1 : 0;

			if (l->tid == l->pid)
				rank = 0;
			sort = rank * 3 * TRACE_MAX_SLOTS + lane_index(l->kind, l->slot);
		}
		if (l->slot) {
			size_t len = strlen(name);

			snprintf(name + len, sizeof(name) - len, " (overlap %u)",
			         (unsigned)l->slot);
		}
		rc = trace_meta(f, b, "thread_name", l->pid, lane_tid(&e), 1, name, 0);
		if (!rc)
			rc = trace_meta(f, b, "thread_sort_index", l->pid, lane_tid(&e), 1, NULL,
			                sort);
	}
	return rc;
}

/* The pid a memory space's counter track goes in: a host space's process;
 * a GPU's first process that allocated on it (the root process otherwise). */
static uint32_t trace_space_pid(const struct tctx *c, const struct mem_space *s)
{
	const struct profile *p = c->p;
	uint32_t proc = s->process;

	if (s->kind == MEM_SPACE_GPU) {
		proc = 0;
		for (size_t i = 0; i < p->nmemory; i++) {
			if (p->memory[i].device == s->device) {
				proc = p->memory[i].process;
				break;
			}
		}
	}
	return trace_pid(c, proc);
}

/* One counter event of space s at relative time rel with point pt. */
static void trace_counter(struct sbuf *b, const struct mem_space *s, uint32_t pid, uint32_t tid,
                          const char *name, int64_t rel, const struct mem_point *pt)
{
	b->n = 0;
	sb_puts(b, "{\"ph\":\"C\",\"cat\":\"memory\",\"name\":");
	sb_json_str(b, name);
	sb_printf(b, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"ts\":", pid, tid);
	sb_us(b, rel);
	if (s->kind == MEM_SPACE_GPU)
		sb_printf(b, ",\"args\":{\"allocated\":%" PRId64 ",\"reserved\":%" PRIu64 "}}",
		          pt->live, pt->rss);
	else
		sb_printf(b, ",\"args\":{\"live\":%" PRId64 ",\"rss\":%" PRIu64 "}}", pt->live,
		          pt->rss);
}

/* Counter tracks, as Kineto's memory view draws them: "Host memory" (live,
 * rss) in each process, "GPU N memory" (allocated, reserved) per device.
 * Only points inside the window; the value at the window's start is
 * repeated there so the curve does not start empty. */
static int trace_write_counters(const struct tctx *c, struct gz_file *f, struct sbuf *b,
                                int *first)
{
	for (size_t k = 0; c->mem && k < c->mem->nspaces; k++) {
		const struct mem_space *s = &c->mem->spaces[k];
		uint32_t pid = trace_space_pid(c, s);
		char name[64];
		size_t i = 0;

		if (s->kind == MEM_SPACE_GPU)
			snprintf(name, sizeof(name), "GPU %" PRIu32 " memory", s->device);
		else
			snprintf(name, sizeof(name), "Host memory");
		while (i < s->ntimeline && trace_rel(c, PROF_NONE, s->timeline[i].ts) < c->ws)
			i++;
		if (i > 0 && (i == s->ntimeline || trace_rel(c, PROF_NONE, s->timeline[i].ts) > c->ws))
			i--; /* the last point before the window, drawn at its start */
		for (; i < s->ntimeline; i++) {
			int64_t rel = trace_rel(c, PROF_NONE, s->timeline[i].ts);
			int rc;

			if (rel > c->we)
				break;
			/* a tid per track: each is in time order on its own */
			trace_counter(b, s, pid, TRACE_COUNTER_TID + (uint32_t)k, name,
			              rel < c->ws ? c->ws : rel, &s->timeline[i]);
			if (b->oom)
				return -ENOMEM;
			if (!*first)
				gz_puts(f, ",\n");
			*first = 0;
			if ((rc = gz_write(f, b->p, b->n)) != 0)
				return rc;
		}
	}
	return 0;
}

static int trace_write(struct tctx *c, const char *path, const struct trace_opts *o,
                       struct tvec *cuda, struct tvec *cpu, char *err, size_t errlen)
{
	const struct profile *p = c->p;
	uint64_t cap = o && o->max_bytes ? o->max_bytes : TRACE_DEFAULT_CAP;
	const struct tvec *all[2] = {cuda, cpu};
	struct gz_file *f = NULL;
	struct sbuf b = {0};
	size_t written_cpu = 0;
	/* slices the run has: those built, or the counting pass's total */
	size_t total_cpu = c->cpu_total > cpu->n ? c->cpu_total : cpu->n;
	int64_t cut_ts = -1;
	int rc, first = 1;

	rc = gz_open(&f, path, gz_path_wants_gzip(path));
	if (rc) {
		snprintf(err, errlen,
		         "cannot create trace %s: %s; check the directory exists and is writable",
		         path, strerror(-rc));
		return -1;
	}
	gz_puts(f, "{\"traceEvents\":[\n");
	rc = trace_write_meta(c, f, &b);
	if (!rc)
		rc = trace_write_counters(c, f, &b, &first);
	for (int k = 0; k < 2 && !rc; k++) {
		for (size_t i = 0; i < all[k]->n && !rc; i++) {
			trace_format(c, &b, &all[k]->v[i]);
			if (b.oom) {
				rc = -ENOMEM;
				break;
			}
			/* the cap drops CPU sample slices only; everything else is
			 * small next to them and needed for the CUDA views */
			if (k == 1 && gz_count(f) + b.n + 2 > cap) {
				cut_ts = all[k]->v[i].ts;
				break;
			}
			if (!first)
				gz_puts(f, ",\n");
			first = 0;
			rc = gz_write(f, b.p, b.n);
			written_cpu += k == 1;
		}
	}
	if (!rc) {
		gz_puts(
		    f,
		    "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"tool\":\"cbottleneck\"");
		b.n = 0;
		sb_puts(&b, ",\"command\":");
		{
			struct sbuf cmd = {0};

			for (char **a = p->argv; a && *a; a++) {
				if (a != p->argv)
					sb_puts(&cmd, " ");
				sb_puts(&cmd, *a);
			}
			sb_json_str(&b, cmd.p ? cmd.p : "");
			free(cmd.p);
		}
		sb_printf(
		    &b,
		    ",\"start_monotonic_ns\":%" PRIu64 ",\"period_ns\":%" PRIu64
		    ",\"frequency_hz\":%.3f,\"time_unit\":\"us, relative to start_monotonic_ns\"",
		    p->start_ns, p->period_ns, p->frequency_hz);
		sb_printf(&b, ",\"window_start_ns\":%" PRId64, c->ws);
		if (c->we != INT64_MAX)
			sb_printf(&b, ",\"window_end_ns\":%" PRId64, c->we);
		sb_printf(
		    &b,
		    ",\"cpu_slices\":%zu,\"cpu_slices_dropped\":%zu,\"size_cap_bytes\":%" PRIu64
		    "}\n}\n",
		    total_cpu, total_cpu - written_cpu, cap);
		rc = b.oom ? -ENOMEM : gz_write(f, b.p, b.n);
	}
	{
		int crc = gz_close(f);

		if (!rc)
			rc = crc;
	}
	free(b.p);
	if (rc) {
		snprintf(err, errlen, "cannot write trace %s: %s", path, strerror(-rc));
		return -1;
	}
	if (total_cpu > written_cpu && !(o && o->quiet)) {
		double at = (double)(cut_ts >= 0 ? cut_ts : c->cpu_cut) / 1e9;

		fprintf(stderr,
		        "cbottleneck: trace %s reached its size cap (%" PRIu64 " MiB): "
		        "CPU sample slices after %.3fs were left out (%zu of %zu); "
		        "narrow it with --trace-window START:END\n",
		        path, cap >> 20, at, total_cpu - written_cpu, total_cpu);
	}
	return 0;
}

int export_trace(const struct analysis *a, const char *path, const struct trace_opts *o,
                 char *err, size_t errlen)
{
	const struct profile *p = a->profile;
	struct tctx c = {.p = p, .mem = a->memory, .steps = a->steps, .ops = a->ops};
	struct tvec cuda = {0}, cpu = {0};
	uint64_t cap = o && o->max_bytes ? o->max_bytes : TRACE_DEFAULT_CAP;
	int rc;

	for (size_t q = 0; q < p->nprocesses && !c.has_ranks; q++)
		c.has_ranks = p->processes[q].rank.rank >= 0;
	c.ws = o ? (int64_t)o->window_start_ns : 0;
	c.we = o && o->window_end_ns ? (int64_t)o->window_end_ns : INT64_MAX;
	/* a CPU slice takes at least 79 bytes of JSON, so no more than cap/79
	 * can be written: building many more only costs memory and sorting.
	 * trace_plan_cpu() picks the time before which at most this many start. */
	c.cpu_limit = (size_t)(cap / 64) + 4096;
	if (c.we <= c.ws) {
		snprintf(err, errlen, "trace window is empty: its end must come after its start");
		return -1;
	}
	rc = trace_pids(&c);
	if (!rc)
		rc = trace_gpu_pids(&c);
	if (!rc)
		rc = trace_collect_cuda(&c, &cuda);
	if (!rc)
		rc = trace_collect_steps(&c, &cuda);
	if (!rc)
		rc = trace_collect_mpi(&c, &cuda);
	if (!rc)
		rc = trace_plan_cpu(&c);
	if (!rc)
		rc = trace_collect_cpu(&c, &cpu);
	if (!rc)
		rc = trace_collect_offcpu(&c, &cpu);
	if (!rc)
		rc = trace_assign_slots(&c, &cuda);
	if (!rc)
		rc = trace_assign_slots(&c, &cpu);
	if (!rc)
		rc = trace_add_flows(&c, &cuda);
	if (!rc)
		rc = trace_add_lock_flows(&c, &cpu);
	if (!rc) {
		if (cuda.n)
			qsort(cuda.v, cuda.n, sizeof(*cuda.v), cmp_emit_order);
		if (cpu.n)
			qsort(cpu.v, cpu.n, sizeof(*cpu.v), cmp_emit_order);
		rc = trace_write(&c, path, o, &cuda, &cpu, err, errlen) ? 1 : 0;
	} else {
		snprintf(err, errlen, "cannot build trace %s: %s", path, strerror(-rc));
	}
	free(cuda.v);
	free(cpu.v);
	free(c.lanes);
	free(c.gpu_pid_proc);
	free(c.gpu_pid_dev);
	free(c.pid_of);
	return rc ? -1 : 0;
}

/* One bound of --trace-window: a number with an optional unit (s, ms, us,
 * ns; seconds when none). */
static int trace_window_bound(const char *s, size_t len, uint64_t *ns)
{
	char buf[64], *end;
	double v, mult = 1e9;

	*ns = 0;
	if (len == 0)
		return 0;
	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (!(buf[0] >= '0' && buf[0] <= '9') && buf[0] != '.')
		return -1;
	v = strtod(buf, &end);
	if (end == buf || !(v >= 0) || v > 1e12)
		return -1;
	if (!strcmp(end, "s") || !*end)
		mult = 1e9;
	else if (!strcmp(end, "ms"))
		mult = 1e6;
	else if (!strcmp(end, "us"))
		mult = 1e3;
	else if (!strcmp(end, "ns"))
		mult = 1;
	else
		return -1;
	*ns = (uint64_t)(v * mult + 0.5);
	return 0;
}

int trace_window_parse(const char *s, uint64_t *start_ns, uint64_t *end_ns)
{
	const char *colon = s ? strchr(s, ':') : NULL;
	uint64_t a, b;

	if (!colon || strchr(colon + 1, ':'))
		return -1;
	if (trace_window_bound(s, (size_t)(colon - s), &a) ||
	    trace_window_bound(colon + 1, strlen(colon + 1), &b))
		return -1;
	if (colon[1] && b <= a)
		return -1;
	*start_ns = a;
	*end_ns = b;
	return 0;
}
