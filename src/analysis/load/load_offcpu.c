/*
 * load_offcpu.c — the wall sampler (--off-cpu) of a session file turned into
 * the profile: header.offcpu into prof_process.offcpu and its data-quality
 * warnings, OFFCPU records into profile.offcpu sorted by (process, start),
 * their stacks interned with the samples' (pc[0] where the system call
 * returns, symbolized as is; the others at pc-1), the owner tid of a mutex
 * made a thread index.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "load_int.h"

/* Longest stretch believed: the agent cuts a stretch every 100 ms of wall, a
 * RUNQ record spans one tick; an hour is a broken or hostile record, whose
 * end would otherwise stretch its process's end. */
#define OFFCPU_MAX_SPAN_NS 3600000000000ull

void load_offcpu_header(struct load *L, struct prof_process *pr, const struct cbn_file_header *h)
{
	const struct cbn_offcpu_state *o = &h->offcpu;
	struct prof_offcpu_proc *po = &pr->offcpu;
	size_t n = o->reason_len < sizeof(o->reason) ? o->reason_len : sizeof(o->reason);

	memset(po, 0, sizeof(*po));
	po->state = o->state;
	if (po->state > CBN_OFFCPU_REFUSED) {
		load_warn(L, "%s: unknown off-CPU sampler state %u; taken as off", pr->file,
			  po->state);
		po->state = CBN_OFFCPU_OFF;
	}
	po->rate_hz = o->rate_hz;
	po->ticks = o->ticks;
	po->looks = o->looks;
	po->records = o->records;
	po->unconfirmed = o->unconfirmed;
	po->no_stack = o->no_stack;
	po->lost = o->lost;
	po->late_ns = o->late_ns;
	po->reason = load_strndup(L, o->reason, strnlen(o->reason, n));
}

void load_offcpu_rec(struct load *L, const struct reader_rec *r)
{
	const struct cbn_rec_offcpu *o = (const void *)r->raw;
	struct profile *p = L->p;
	struct load_file *F = L->f;
	const struct prof_offcpu_proc *po = &p->processes[F->proc].offcpu;
	uint64_t span, tick;
	struct prof_offcpu *e;

	/* the reader checked the size and that nframes fits (r->pcs) */
	if (o->tid == 0 || o->start == 0 || o->end < o->start ||
	    o->end - o->start > OFFCPU_MAX_SPAN_NS) {
		F->off_bad++;
		return;
	}
	span = o->end - o->start;
	e = LOAD_PUSH(L, p->offcpu, p->noffcpu, L->capoffcpu);
	if (!e)
		return;
	e->start = o->start;
	e->end = o->end;
	/* A stretch stands for no more wall than it spans; ticks that came
	 * late make it span up to a tick less than ticks x period, so only a
	 * larger excess is a broken record. */
	e->weight_ns = o->weight_ns;
	if (e->weight_ns > span) {
		tick = po->rate_hz ? 1000000000ull / po->rate_hz : 10000000ull;
		if (e->weight_ns - span > tick)
			F->off_cut++;
		e->weight_ns = span;
	}
	e->addr = o->addr;
	e->process = F->proc;
	e->thread = load_thread(L, F->proc, o->tid);
	e->stack = PROF_NONE;
	e->kind = o->kind < CBN_OFF_NKINDS ? o->kind : CBN_OFF_OTHER;
	e->syscall = o->syscall;
	e->owner_thread = o->owner; /* a tid until load_offcpu_finish */
	e->flags = r->flags;
	if (r->nframes && !(r->flags & CBN_OFFCPU_NO_STACK)) {
		/* the stack is built once the module map is complete */
		struct load_cstack *c = LOAD_PUSH(L, F->ostacks, F->nostacks, F->capostacks);

		if (!c)
			return;
		c->correlation = (uint32_t)(p->noffcpu - 1 - F->offcpu_first);
		c->pcs = r->pcs;
		c->nframes = r->nframes;
	}
	if (o->end > F->last_ts)
		F->last_ts = o->end;
}

static int offcpu_cmp(const void *a, const void *b)
{
	const struct prof_offcpu *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->kind < y->kind ? -1 : x->kind > y->kind;
}

/* Dropped stacks or cut records of one file below this are races, not a
 * Data quality line whatever the file's size (the counts stay in the JSON
 * and the -v header). */
#define LOAD_OFF_RACES 3

static void offcpu_warnings(struct load *L, size_t kept)
{
	const struct load_file *F = L->f;
	const struct prof_process *pr = &L->p->processes[F->proc];
	const struct prof_offcpu_proc *po = &pr->offcpu;

	if (po->state == CBN_OFFCPU_REFUSED)
		load_warn(L, "%s: off-CPU sampling was asked for but not done (%s); the report "
			     "shows where threads ran, not where they waited", pr->file,
			  po->reason[0] ? po->reason : "no reason given");
	if (po->lost)
		load_warn(L, "%s: %" PRIu64 " looks at blocked threads were not recorded (the "
			     "session file was full); off-CPU time is undercounted", pr->file,
			  po->lost);
	/* a look that raced its thread, a stretch a few ns too long: normal
	 * in a busy tree and harmless unless they are a real share, and one
	 * or two of them are a race in any file: a build's short compilers
	 * have a few dozen records each, where one is over the share */
	if (po->unconfirmed >= LOAD_OFF_RACES && po->unconfirmed * 20 > po->records + po->unconfirmed)
		load_warn(L, "%s: %" PRIu64 " off-CPU stacks were dropped because the thread ran "
			     "on while its stack was read; their time has no stack", pr->file,
			  po->unconfirmed);
	if (F->off_bad)
		load_warn(L, "%s: skipped %" PRIu64 " damaged off-CPU records (no thread, or an "
			     "end before their start or hours after it)", pr->file, F->off_bad);
	if (F->off_cut >= LOAD_OFF_RACES && F->off_cut * 100 > kept)
		load_warn(L, "%s: %" PRIu64 " off-CPU records claimed more time than they span; "
			     "cut to their span", pr->file, F->off_cut);
	if (kept && po->state == CBN_OFFCPU_OFF)
		load_warn(L, "%s: off-CPU records in a file whose header says the sampler was "
			     "off; they are kept", pr->file);
}

void load_offcpu_finish(struct load *L, uint64_t ring_cut)
{
	struct profile *p = L->p;
	struct load_file *F = L->f;
	size_t i, o, n = p->noffcpu - F->offcpu_first;
	struct prof_offcpu *v = p->offcpu + F->offcpu_first;

	for (i = 0; i < F->nostacks; i++) {
		const struct load_cstack *c = &F->ostacks[i];
		struct prof_offcpu *e = &p->offcpu[F->offcpu_first + c->correlation];

		if (e->end > ring_cut)
			e->stack = load_stack(L, c->pcs, c->nframes, e->start, 0);
		if (L->nomem)
			return;
	}
	for (i = o = 0; i < n; i++) {
		struct prof_offcpu e = v[i];

		/* ring mode: what ended before the kept stretch is gone, as the
		 * samples there are; a stretch across its start keeps its part */
		if (e.end <= ring_cut)
			continue;
		if (e.start < ring_cut) {
			e.weight_ns = (uint64_t)((unsigned __int128)e.weight_ns *
						 (e.end - ring_cut) / (e.end - e.start));
			e.start = ring_cut;
		}
		e.owner_thread = e.owner_thread ? load_thread_find(L, F->proc, e.owner_thread)
						: PROF_NONE;
		v[o++] = e;
	}
	p->noffcpu = F->offcpu_first + o;
	if (o > 1)
		qsort(v, o, sizeof(*v), offcpu_cmp);
	offcpu_warnings(L, o);
}
