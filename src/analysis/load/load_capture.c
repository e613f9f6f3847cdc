/*
 * load_capture.c — the capture controls of a session file turned into the
 * profile: header.capture into prof_process.capture, CAPTURE records into
 * prof.windows (OPEN..CLOSE pairs) and prof.ctl_marks.  A run without
 * controls gets one window, its whole process.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "load_int.h"

void load_capture_header(struct load *L, struct prof_process *pr, const struct cbn_file_header *h)
{
	const struct cbn_capture_state *c = &h->capture;
	struct prof_capture_proc *pc = &pr->capture;
	size_t n = c->spec_len < sizeof(c->spec) ? c->spec_len : sizeof(c->spec);

	memset(pc, 0, sizeof(*pc));
	pc->mode = c->mode;
	if (pc->mode > CBN_CAPTURE_CONTROLLED) {
		load_warn(L, "%s: unknown capture mode %u; taken as a run without capture controls",
			  pr->file, pc->mode);
		pc->mode = CBN_CAPTURE_ALL;
	}
	pc->windows = c->windows;
	pc->steps = c->steps;
	pc->active_ns = c->active_ns;
	pc->spec = pc->mode == CBN_CAPTURE_ALL ? "" :
		   load_strndup(L, c->spec, strnlen(c->spec, n));
}

void load_capture_rec(struct load *L, const struct reader_rec *r)
{
	const struct cbn_rec_capture *c = (const void *)r->raw;
	struct load_file *F = L->f;
	struct load_capev *e;

	if (c->event < CBN_CAPTURE_OPEN || c->event > CBN_CAPTURE_MARK ||
	    c->cause < CBN_CAUSE_START || c->cause > CBN_CAUSE_EXIT) {
		load_warn(L, "%s: capture record with unknown event %u or cause %u skipped",
			  L->p->processes[F->proc].file, c->event, c->cause);
		return;
	}
	e = LOAD_PUSH(L, F->capevs, F->ncapevs, F->capcapevs);
	if (!e)
		return;
	e->ts = c->ts;
	e->step = c->step;
	e->seq = (uint32_t)(F->ncapevs - 1);
	e->event = c->event;
	e->cause = c->cause;
	e->name = c->event == CBN_CAPTURE_MARK ? load_intern(L, r->str) : NULL;
	if (c->ts > F->last_ts)
		F->last_ts = c->ts;
}

/* Records come from whichever thread changed the state: time order, then the
 * order they were written in. */
static int capev_cmp(const void *a, const void *b)
{
	const struct load_capev *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A window from ts, NULL when memory is short. */
static struct prof_window *window_open(struct load *L, uint64_t ts, uint32_t cause, uint64_t step)
{
	struct profile *p = L->p;
	struct prof_window *w = LOAD_PUSH(L, p->windows, p->nwindows, L->capwindows);

	if (!w)
		return NULL;
	memset(w, 0, sizeof(*w));
	w->start = ts;
	w->end = ts;
	w->process = L->f->proc;
	w->open_cause = cause;
	w->first_step = step;
	return w;
}

/* After the file, its process's end known: pair the events into windows. */
void load_capture_finish(struct load *L)
{
	struct profile *p = L->p;
	struct load_file *F = L->f;
	struct prof_process *pr = &p->processes[F->proc];
	size_t i, open = SIZE_MAX, odd = 0;

	if (F->ncapevs > 1)
		qsort(F->capevs, F->ncapevs, sizeof(*F->capevs), capev_cmp);
	if (pr->capture.mode == CBN_CAPTURE_ALL) {
		struct prof_window *w = window_open(L, pr->start, CBN_CAUSE_START, 0);

		if (!w)
			return;
		w->end = pr->end > pr->start ? pr->end : pr->start;
		w->close_cause = CBN_CAUSE_EXIT;
		for (i = 0; i < F->ncapevs; i++)
			odd += F->capevs[i].event != CBN_CAPTURE_MARK;
	}
	for (i = 0; i < F->ncapevs; i++) {
		const struct load_capev *e = &F->capevs[i];

		if (e->event == CBN_CAPTURE_MARK) {
			struct prof_ctl_mark *m = LOAD_PUSH(L, p->ctl_marks, p->nctl_marks, L->capctlmarks);

			if (!m)
				return;
			m->ts = e->ts;
			m->process = F->proc;
			m->name = e->name;
			continue;
		}
		if (pr->capture.mode == CBN_CAPTURE_ALL)
			continue;
		if (e->event == CBN_CAPTURE_OPEN && open == SIZE_MAX) {
			/* e->step: the cbn_step() calls before it, the number of the
			 * step in progress (a window the schedule opens opens at the
			 * call that starts its first step, already counted) */
			if (!window_open(L, e->ts, e->cause, e->step))
				return;
			open = p->nwindows - 1;
		} else if (e->event == CBN_CAPTURE_CLOSE && open != SIZE_MAX) {
			p->windows[open].end = e->ts;
			p->windows[open].close_cause = e->cause;
			open = SIZE_MAX;
		} else {
			odd++;
		}
	}
	if (open != SIZE_MAX) {
		/* Still open when the file ends (a crash, SIGKILL): up to the end. */
		struct prof_window *w = &p->windows[open];

		w->end = pr->end > w->start ? pr->end : w->start;
		w->close_cause = CBN_CAUSE_EXIT;
		pr->capture.active_ns += w->end - w->start;
	}
	if (odd)
		load_warn(L, "%s: %zu capture records out of order (an opening inside a window, a "
			     "closing outside one, or windows in a run without controls) were ignored",
			  pr->file, odd);
}
