/*
 * stackw.c — what each call stack weighs (stackw.h): the per-stack weights
 * of every sample type and the source lines' totals, once per report, and
 * the per-(stack, thread) and per-thread views of the CPU samples that pprof
 * and the HTML timeline ask for.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "calltree.h"
#include "mem_samples.h"
#include "stackw.h"

const struct prof_frame *stackw_frames(const struct profile *p, uint32_t st, uint32_t *n)
{
	const struct prof_stack *s;

	*n = 0;
	if (st >= p->nstacks)
		return NULL;
	s = &p->stacks[st];
	if (!s->nframes || s->first >= p->nframes || s->nframes > p->nframes - s->first)
		return NULL;
	*n = s->nframes;
	return &p->frames[s->first];
}

double stackw_mem_value(const struct mem_sample *s, enum stackw_type t)
{
	switch (t) {
	case STACKW_ALLOC_SPACE:
		return s->bytes;
	case STACKW_ALLOC_OBJECTS:
		return s->objects;
	case STACKW_INUSE_SPACE:
		return s->live ? s->bytes : 0;
	case STACKW_INUSE_OBJECTS:
		return s->live ? s->objects : 0;
	default:
		return 0;
	}
}

size_t stackw_per(enum stackw_type t)
{
	return t == STACKW_WALL || t == STACKW_OFFCPU ? STACKW_WALL_SLOTS : 2;
}

size_t stackw_nslots(const struct stackw *w, enum stackw_type t)
{
	return stackw_per(t) * (w->nstacks + 1);
}

double stackw_get(const struct stackw *w, enum stackw_type t, size_t i)
{
	switch (t) {
	case STACKW_CPU:
		return w->cpu ? w->cpu[i] : 0;
	case STACKW_WALL:
	case STACKW_OFFCPU:
		/* offcpu: the off-CPU kinds only */
		if (!w->wall || (t == STACKW_OFFCPU && i % STACKW_WALL_SLOTS < 2))
			return 0;
		return w->wall[i];
	default:
		/* the memory types: one per stack, on its whole-stack slot */
		if ((size_t)t - STACKW_ALLOC_SPACE >= 4 || !w->mem[t - STACKW_ALLOC_SPACE] || i % 2)
			return 0;
		return w->mem[t - STACKW_ALLOC_SPACE][i / 2];
	}
}

/* The CPU samples in periods per (stack, truncated) slot, and the latest. */
static void stackw_cpu(const struct profile *p, struct stackw *w)
{
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		size_t k = s->stack < p->nstacks ? s->stack : p->nstacks;

		w->cpu[2 * k + ((s->flags & CBN_SAMPLE_TRUNCATED) ? 1 : 0)] +=
		    s->weight ? s->weight : 1;
		if (s->ts > w->last_ts)
			w->last_ts = s->ts;
	}
}

/* Wall time in ns: on-CPU samples at their process's period (else the
 * run's), off-CPU stretches by kind. */
static void stackw_wall(const struct profile *p, double *w)
{
	size_t i;

	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		size_t k = s->stack < p->nstacks ? s->stack : p->nstacks;
		uint64_t period = p->period_ns;

		if (s->thread < p->nthreads && p->threads[s->thread].process < p->nprocesses &&
		    p->processes[p->threads[s->thread].process].period_ns)
			period = p->processes[p->threads[s->thread].process].period_ns;
		w[k * STACKW_WALL_SLOTS + ((s->flags & CBN_SAMPLE_TRUNCATED) ? 1 : 0)] +=
		    (double)(s->weight ? s->weight : 1) * (double)period;
	}
	for (i = 0; i < p->noffcpu; i++) {
		const struct prof_offcpu *o = &p->offcpu[i];
		size_t k = o->stack < p->nstacks ? o->stack : p->nstacks;
		uint32_t kind = o->kind < CBN_OFF_NKINDS ? o->kind : CBN_OFF_OTHER;

		w[k * STACKW_WALL_SLOTS + 2 + kind] += (double)o->weight_ns;
	}
}

static int has_memory(const struct profile *p)
{
	if (p->nmem_allocs)
		return 1;
	for (size_t i = 0; i < p->nprocesses; i++)
		if (p->processes[i].mem.state == CBN_MEM_ON)
			return 1;
	return 0;
}

static int has_offcpu(const struct profile *p)
{
	if (p->noffcpu)
		return 1;
	for (size_t i = 0; i < p->nprocesses; i++)
		if (p->processes[i].offcpu.state == CBN_OFFCPU_ON)
			return 1;
	return 0;
}

/* --- line totals --------------------------------------------------------------- */

struct line_probe {
	const struct stackw *w;
	const char *file;
	uint32_t line;
};

static int line_eq(const void *ctx, uint32_t v)
{
	const struct line_probe *k = ctx;
	const struct stackw_line *l = &k->w->lines[v];

	return l->line == k->line && (l->file == k->file || !strcmp(l->file, k->file));
}

static uint64_t line_hash(const char *file, uint32_t line)
{
	return util_mix64(util_fnv1a_str(file, UTIL_FNV_INIT) ^ line);
}

/* (file, line)'s entry, created when missing: UINT32_MAX on OOM. */
static uint32_t line_entry(struct stackw *w, size_t *cap, const char *file, uint32_t line)
{
	struct line_probe k = {w, file, line};
	uint64_t h = line_hash(file, line);
	uint32_t v = util_map_find(&w->line_index, h, line_eq, &k);

	if (v != UINT32_MAX)
		return v;
	if (w->nlines >= UINT32_MAX - 1 ||
	    util_grow((void **)&w->lines, cap, w->nlines, sizeof(*w->lines)) < 0 ||
	    util_map_put(&w->line_index, h, (uint32_t)w->nlines) < 0)
		return UINT32_MAX;
	w->lines[w->nlines] = (struct stackw_line){file, line, 0};
	return (uint32_t)w->nlines++;
}

/* Each line's CPU ns (the call tree's per slot), once per stack: a line
 * stamped with the stack it was last counted for. */
static int stackw_lines(const struct profile *p, const struct ct_tree *ct, struct stackw *w)
{
	uint32_t *stamp = NULL;
	size_t cap = 0, scap = 0;
	int ret = 0;

	for (size_t i = 0; ct && ct->weight && i < p->nstacks && !ret; i++) {
		uint64_t wi = ct->weight[2 * i] + ct->weight[2 * i + 1];
		const struct prof_frame *fr;
		uint32_t n;

		if (!wi || !(fr = stackw_frames(p, (uint32_t)i, &n)))
			continue;
		for (uint32_t d = 0; d < n; d++) {
			size_t before = w->nlines;
			uint32_t v;

			if (!fr[d].file || !*fr[d].file || !fr[d].line)
				continue;
			if ((v = line_entry(w, &cap, fr[d].file, fr[d].line)) == UINT32_MAX ||
			    util_grow((void **)&stamp, &scap, v, sizeof(*stamp)) < 0) {
				ret = -ENOMEM;
				break;
			}
			if (w->nlines != before)
				stamp[v] = 0;
			if (stamp[v] == i + 1)
				continue;
			stamp[v] = (uint32_t)(i + 1);
			w->lines[v].total_ns += wi;
		}
	}
	free(stamp);
	return ret;
}

uint64_t stackw_line_total(const struct stackw *w, const char *file, uint32_t line)
{
	struct line_probe k = {w, file, line};
	uint32_t v;

	if (!w || !file || !w->nlines)
		return 0;
	v = util_map_find(&w->line_index, line_hash(file, line), line_eq, &k);
	return v == UINT32_MAX ? 0 : w->lines[v].total_ns;
}

/* --- the whole ------------------------------------------------------------------ */

int stackw_build(const struct profile *p, const struct ct_tree *ct,
		 const struct mem_sample *ms, size_t nms, struct stackw *w)
{
	size_t slots = p->nstacks + 1;

	memset(w, 0, sizeof(*w));
	w->nstacks = p->nstacks;
	w->memory = has_memory(p);
	w->offcpu = has_offcpu(p);
	if (!(w->cpu = calloc(2 * slots, sizeof(*w->cpu))))
		goto oom;
	stackw_cpu(p, w);
	for (int t = 0; w->memory && t < 4; t++) {
		if (!(w->mem[t] = calloc(slots, sizeof(*w->mem[t]))))
			goto oom;
		for (size_t i = 0; i < nms; i++)
			w->mem[t][ms[i].stack < p->nstacks ? ms[i].stack : p->nstacks] +=
			    stackw_mem_value(&ms[i], (enum stackw_type)(STACKW_ALLOC_SPACE + t));
	}
	if (w->offcpu) {
		if (!(w->wall = calloc(STACKW_WALL_SLOTS * slots, sizeof(*w->wall))))
			goto oom;
		stackw_wall(p, w->wall);
	}
	if (stackw_lines(p, ct, w) < 0)
		goto oom;
	return 0;
oom:
	stackw_free(w);
	return -ENOMEM;
}

void stackw_free(struct stackw *w)
{
	if (!w)
		return;
	free(w->cpu);
	for (int t = 0; t < 4; t++)
		free(w->mem[t]);
	free(w->wall);
	free(w->lines);
	util_map_free(&w->line_index);
	memset(w, 0, sizeof(*w));
}

/* --- views of the CPU samples, on demand ------------------------------------ */

static int cmp_sample(const void *a, const void *b, void *arg)
{
	const struct profile *prof = arg;
	const struct prof_sample *x = &prof->samples[*(const uint32_t *)a];
	const struct prof_sample *y = &prof->samples[*(const uint32_t *)b];

	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return 0;
}

int stackw_by_thread(const struct analysis *a, struct stackw_thread **out, size_t *n)
{
	const struct profile *p = a->profile;
	uint32_t *idx = util_reallocarray(NULL, p->nsamples + 1, sizeof(*idx));
	struct stackw_thread *v = util_reallocarray(NULL, p->nsamples + 1, sizeof(*v));
	size_t nv = 0;

	*out = NULL;
	*n = 0;
	if (!idx || !v) {
		free(idx);
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->nsamples; i++)
		idx[i] = (uint32_t)i;
	qsort_r(idx, p->nsamples, sizeof(*idx), cmp_sample, (void *)p);
	for (size_t i = 0; i < p->nsamples;) {
		const struct prof_sample *s = &p->samples[idx[i]];
		struct stackw_thread *e = &v[nv++];
		size_t j = i;

		*e = (struct stackw_thread){s->stack, s->thread, 0, 0};
		for (; j < p->nsamples && p->samples[idx[j]].stack == s->stack &&
		       p->samples[idx[j]].thread == s->thread;
		     j++) {
			uint64_t w = p->samples[idx[j]].weight ? p->samples[idx[j]].weight : 1;

			e->weight += w;
			e->ns += w * prof_period_of_thread(p, s->thread);
		}
		i = j;
	}
	free(idx);
	if (!nv) {
		free(v);
		v = NULL;
	}
	*out = v;
	*n = nv;
	return 0;
}

int stackw_ticks(const struct analysis *a, struct stackw_ticks *t)
{
	const struct profile *p = a->profile;
	size_t i, *at;

	memset(t, 0, sizeof(*t));
	t->nthreads = p->nthreads;
	t->off = calloc(p->nthreads + 1, sizeof(*t->off));
	at = calloc(p->nthreads + 1, sizeof(*at));
	t->v = malloc((p->nsamples + 1) * sizeof(*t->v));
	if (!t->off || !at || !t->v) {
		free(at);
		stackw_ticks_free(t);
		return -ENOMEM;
	}
	for (i = 0; i < p->nsamples; i++)
		if (p->samples[i].thread < p->nthreads)
			t->off[p->samples[i].thread + 1]++;
	for (i = 0; i < p->nthreads; i++) {
		t->off[i + 1] += t->off[i];
		at[i] = t->off[i];
	}
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];

		if (s->thread >= p->nthreads)
			continue;
		t->v[at[s->thread]++] = (struct stackw_tick){
			.ts = s->ts,
			.cpu_ns = (uint64_t)s->weight * prof_period_of_thread(p, s->thread),
			.slot = (uint32_t)(2 * (s->stack < p->nstacks ? s->stack : p->nstacks) +
					   ((s->flags & CBN_SAMPLE_TRUNCATED) ? 1 : 0)),
		};
	}
	free(at);
	return 0;
}

void stackw_ticks_free(struct stackw_ticks *t)
{
	free(t->v);
	free(t->off);
	memset(t, 0, sizeof(*t));
}
