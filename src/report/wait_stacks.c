/*
 * wait_stacks.c — the wall-clock weights per stack that the flame graph and
 * the folded stacks draw with --sample-type wall or offcpu (on-CPU samples in
 * ns, off-CPU stretches by kind), and the names those writers share.
 */
#include <string.h>

#include "analysis.h"
#include "export.h"
#include "wait.h"
#include "wait_report.h"

int export_sample_is_wall(enum export_sample t)
{
	return t == EXPORT_WALL || t == EXPORT_OFFCPU;
}

int export_has_offcpu(const struct profile *p)
{
	if (p->noffcpu)
		return 1;
	for (size_t i = 0; i < p->nprocesses; i++)
		if (p->processes[i].offcpu.state == CBN_OFFCPU_ON)
			return 1;
	return 0;
}

const char *wait_offcpu_frame(uint32_t kind)
{
	static const char *const f[CBN_OFF_NKINDS] = {
		"[off-CPU: other]", "[off-CPU: futex]", "[off-CPU: io]", "[off-CPU: poll]",
		"[off-CPU: sleep]", "[off-CPU: child]", "[off-CPU: fault]", "[off-CPU: runnable]",
	};

	return kind < CBN_OFF_NKINDS ? f[kind] : f[CBN_OFF_OTHER];
}

void wait_wall_weights(const struct profile *p, int with_on_cpu, double *w)
{
	size_t i;

	for (i = 0; with_on_cpu && i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		size_t k = s->stack < p->nstacks ? s->stack : p->nstacks;
		uint64_t period = p->period_ns;

		if (s->thread < p->nthreads && p->threads[s->thread].process < p->nprocesses &&
		    p->processes[p->threads[s->thread].process].period_ns)
			period = p->processes[p->threads[s->thread].process].period_ns;
		w[k * WAIT_WALL_SLOTS + ((s->flags & CBN_SAMPLE_TRUNCATED) ? 1 : 0)] +=
		    (double)(s->weight ? s->weight : 1) * (double)period;
	}
	for (i = 0; i < p->noffcpu; i++) {
		const struct prof_offcpu *o = &p->offcpu[i];
		size_t k = o->stack < p->nstacks ? o->stack : p->nstacks;
		uint32_t kind = o->kind < CBN_OFF_NKINDS ? o->kind : CBN_OFF_OTHER;

		w[k * WAIT_WALL_SLOTS + 2 + kind] += (double)o->weight_ns;
	}
}
