/*
 * wait_stretch.c — the off-CPU stretches as the writers show them (wait.h's
 * struct wait_stretch: a trace's off-CPU slices and lock flows, pprof's
 * off-CPU samples): each record with its call site, the blocking call it is
 * named after and the thread holding the lock it waited for, classified once
 * here by the system-library list of wait_class.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wait_int.h"

/* The call site of stack st (the innermost frame outside the system
 * libraries, the leaf when all are) and the call its stretch is named after
 * (the outermost frame of the system libraries' run at the leaf, the leaf
 * itself when it lies outside them); both PROF_NONE without a usable stack,
 * and a frame without a valid function ends the walk. */
static void stretch_site(const struct profile *p, const uint16_t *cls, uint32_t st,
			 uint32_t *site, uint32_t *call)
{
	const struct prof_frame *fr;
	uint32_t n, k;

	*site = *call = PROF_NONE;
	if (!(fr = stackw_frames(p, st, &n)))
		return;
	for (k = 0; k < n && fr[k].func < p->nfuncs; k++) {
		uint32_t f = fr[k].func;

		if (*site == PROF_NONE)
			*site = f;
		if (!(wait_cls_of(cls, p, f) & FC_SYS)) {
			*site = f;
			if (*call == PROF_NONE)
				*call = f;
			return;
		}
		*call = f;
	}
}

/* A futex wait named after a lock, for a mutex another thread of the
 * process held: that thread (prof.threads index), else PROF_NONE. */
static uint32_t stretch_holder(const struct profile *p, const struct prof_offcpu *o,
			       uint32_t call)
{
	const char *name = call < p->nfuncs ? p->funcs[call].name : NULL;

	if (o->kind != CBN_OFF_FUTEX || o->owner_thread == PROF_NONE ||
	    o->owner_thread >= p->nthreads || o->owner_thread == o->thread)
		return PROF_NONE;
	return name && strstr(name, "lock") ? o->owner_thread : PROF_NONE;
}

int wait_build_stretches(const struct profile *p, const uint16_t *cls, struct wait_analysis *w)
{
	if (!p->noffcpu)
		return 0;
	if (!(w->stretches = calloc(p->noffcpu, sizeof(*w->stretches))))
		return -ENOMEM;
	for (size_t i = 0; i < p->noffcpu; i++) {
		const struct prof_offcpu *o = &p->offcpu[i];
		struct wait_stretch *s = &w->stretches[i];

		*s = (struct wait_stretch){
			.start = o->start, .end = o->end, .weight_ns = o->weight_ns,
			.addr = o->addr, .process = o->process, .thread = o->thread,
			.stack = o->stack, .kind = o->kind, .syscall = o->syscall,
		};
		stretch_site(p, cls, o->stack, &s->site, &s->call);
		s->holder = stretch_holder(p, o, s->call);
	}
	w->nstretches = p->noffcpu;
	return 0;
}
