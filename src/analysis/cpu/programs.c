/*
 * programs.c — the run's CPU by program image and module (programs.h): each
 * process image goes to the program of its executable, each sample's CPU to
 * its program and to the module of its innermost frame; then each program's
 * lives joined into its wall time and its hottest function.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "programs.h"
#include "util.h"

const char *programs_name_of(const struct profile *p, uint32_t pi)
{
	const struct prof_process *pr;
	const char *b;

	if (pi >= p->nprocesses)
		return "?";
	pr = &p->processes[pi];
	b = util_base_name(pr->exe && *pr->exe ? pr->exe : pr->cmdline ? pr->cmdline : "");
	return *b ? b : "?";
}

/* A module's name as the table shows it: the file's base name, or what
 * stands for one. */
static const char *module_name(const struct prof_func *f)
{
	if (f->flags & PROF_FUNC_PYTHON)
		return "[python]";
	if (!f->module || !*f->module)
		return "[unknown]";
	if (!strcmp(f->module, "kernel"))
		return "[kernel]";
	return util_base_name(f->module);
}

struct names {                   /* distinct strings, each an index */
	struct util_map map;
	const char **v;
	size_t n, cap;
};

static int names_eq(const void *ctx, uint32_t v)
{
	const struct names *t = ((const void *const *)ctx)[0];
	const char *s = ((const void *const *)ctx)[1];

	return !strcmp(t->v[v], s);
}

/* The index of s in t, added at first sight; -ENOMEM. */
static long names_id(struct names *t, const char *s)
{
	const void *probe[2] = { t, s };
	uint64_t h = util_fnv1a_str(s, UTIL_FNV_INIT);
	uint32_t v = util_map_find(&t->map, h, names_eq, probe);

	if (v != UINT32_MAX)
		return v;
	if (util_grow((void **)&t->v, &t->cap, t->n, sizeof(*t->v)) < 0 ||
	    util_map_put(&t->map, h, (uint32_t)t->n) < 0)
		return -ENOMEM;
	t->v[t->n] = s;
	return (long)t->n++;
}

static void names_free(struct names *t)
{
	util_map_free(&t->map);
	free(t->v);
}

struct life {
	uint32_t prog;
	uint64_t s, e;
};

static int life_cmp(const void *a, const void *b)
{
	const struct life *x = a, *y = b;

	if (x->prog != y->prog)
		return x->prog < y->prog ? -1 : 1;
	return x->s < y->s ? -1 : x->s > y->s;
}

/* Each program's wall: the union of its images' lives. */
static int programs_wall(const struct profile *p, const uint32_t *prog_of, struct program *v)
{
	struct life *l = util_reallocarray(NULL, p->nprocesses ? p->nprocesses : 1, sizeof(*l));
	struct util_ival *iv = util_reallocarray(NULL, p->nprocesses ? p->nprocesses : 1,
						 sizeof(*iv));
	size_t i, j, n = 0;
	uint64_t len;

	if (!l || !iv) {
		free(l);
		free(iv);
		return -ENOMEM;
	}
	for (i = 0; i < p->nprocesses; i++) {
		const struct prof_process *pr = &p->processes[i];

		if (pr->end > pr->start)
			l[n++] = (struct life){ prog_of[i], pr->start, pr->end };
	}
	qsort(l, n, sizeof(*l), life_cmp);
	for (i = 0; i < n; i = j) {
		for (j = i; j < n && l[j].prog == l[i].prog; j++)
			iv[j - i] = (struct util_ival){ l[j].s, l[j].e };
		util_ival_union(iv, j - i, &len);
		v[l[i].prog].wall_ns += len;
	}
	free(l);
	free(iv);
	return 0;
}

static int prog_cmp(const void *a, const void *b)
{
	const struct program *x = a, *y = b;

	if (x->cpu_ns != y->cpu_ns)
		return x->cpu_ns > y->cpu_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int mod_cmp(const void *a, const void *b)
{
	const struct prog_module *x = a, *y = b;

	if (x->cpu_ns != y->cpu_ns)
		return x->cpu_ns > y->cpu_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Each program's modules, most CPU first, PROG_MODULES_MAX kept. */
static int programs_modules(struct prog_analysis *g, const struct names *mods,
			    const uint64_t *pm)
{
	struct prog_module *all = calloc(mods->n ? mods->n : 1, sizeof(*all));
	size_t i, k, n;

	if (!all)
		return -ENOMEM;
	for (i = 0; i < g->n; i++) {
		struct program *pg = &g->v[i];

		for (k = n = 0; k < mods->n; k++)
			if (pm[i * mods->n + k])
				all[n++] = (struct prog_module){ mods->v[k], pm[i * mods->n + k] };
		qsort(all, n, sizeof(*all), mod_cmp);
		for (k = 0; k < n; k++) {
			if (k < PROG_MODULES_MAX) {
				pg->mods[pg->nmods++] = all[k];
			} else {
				pg->other_mods_ns += all[k].cpu_ns;
				pg->other_mods++;
			}
		}
	}
	free(all);
	return 0;
}

struct hot {                     /* self time of one function in one program */
	uint32_t prog, func;
	uint64_t ns;
};

static int hot_eq(const void *ctx, uint32_t v)
{
	const struct hot *h = ((const void *const *)ctx)[0], *k = ((const void *const *)ctx)[1];

	return h[v].prog == k->prog && h[v].func == k->func;
}

/* Each program's hottest function, the kernel's left out (its share is the
 * program's kernel_ns), and the CPU no sample saw (it is no function's). */
static int programs_hottest(const struct profile *p, const uint32_t *prog_of,
			    struct program *v)
{
	struct util_map map = { 0 };
	struct hot *h = NULL;
	size_t nh = 0, cap = 0, i;
	int ret = -ENOMEM;

	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		const struct prof_stack *st;
		struct hot key;
		const void *probe[2];
		uint64_t hash;
		uint32_t at, f;

		if (s->thread >= p->nthreads || s->stack >= p->nstacks ||
		    p->threads[s->thread].process >= p->nprocesses)
			continue;
		st = &p->stacks[s->stack];
		if (!st->nframes || st->first >= p->nframes ||
		    (f = p->frames[st->first].func) >= p->nfuncs ||
		    (p->funcs[f].module && !strcmp(p->funcs[f].module, "kernel")) ||
		    (p->funcs[f].flags & PROF_FUNC_UNSEEN))
			continue;
		key = (struct hot){ prog_of[p->threads[s->thread].process], f, 0 };
		probe[0] = h;
		probe[1] = &key;
		hash = util_mix64(((uint64_t)key.prog << 32) | f);
		if ((at = util_map_find(&map, hash, hot_eq, probe)) == UINT32_MAX) {
			if (util_grow((void **)&h, &cap, nh, sizeof(*h)) < 0 ||
			    util_map_put(&map, hash, (uint32_t)nh) < 0)
				goto out;
			h[at = (uint32_t)nh++] = key;
		}
		h[at].ns += (uint64_t)s->weight * prof_period_of_thread(p, s->thread);
	}
	for (i = 0; i < nh; i++) {
		struct program *pg = &v[h[i].prog];

		if (h[i].ns > pg->top_func_ns ||
		    (h[i].ns == pg->top_func_ns && h[i].func < pg->top_func)) {
			pg->top_func_ns = h[i].ns;
			pg->top_func = h[i].func;
		}
	}
	ret = 0;
out:
	util_map_free(&map);
	free(h);
	return ret;
}

/* Processes into programs (prog_of[pi]), with their images and threads. */
static int programs_of_processes(const struct profile *p, struct names *progs,
				 uint32_t *prog_of, struct prog_analysis *g)
{
	size_t i;

	for (i = 0; i < p->nprocesses; i++) {
		long id = names_id(progs, programs_name_of(p, (uint32_t)i));

		if (id < 0)
			return -ENOMEM;
		prog_of[i] = (uint32_t)id;
	}
	if (!(g->v = calloc(progs->n ? progs->n : 1, sizeof(*g->v))))
		return -ENOMEM;
	g->n = progs->n;
	for (i = 0; i < g->n; i++) {
		g->v[i].name = progs->v[i];
		g->v[i].exe = "";
		g->v[i].top_func = PROF_NONE;
	}
	for (i = 0; i < p->nprocesses; i++) {
		struct program *pg = &g->v[prog_of[i]];

		if (!pg->images++)
			pg->exe = p->processes[i].exe ? p->processes[i].exe : "";
	}
	for (i = 0; i < p->nthreads; i++)
		if (p->threads[i].process < p->nprocesses)
			g->v[prog_of[p->threads[i].process]].threads++;
	return 0;
}

/* Samples into their program and their leaf's module: pm[program x
 * module] (allocated here, once every function's module is named). */
static int programs_samples(const struct profile *p, const uint32_t *prog_of,
			    struct prog_analysis *g, struct names *mods, uint64_t **pm)
{
	uint32_t *fmod = malloc((p->nfuncs ? p->nfuncs : 1) * sizeof(*fmod));
	size_t i;

	if (!fmod)
		return -ENOMEM;
	for (i = 0; i < p->nfuncs; i++) {
		long id = names_id(mods, module_name(&p->funcs[i]));

		if (id < 0) {
			free(fmod);
			return -ENOMEM;
		}
		fmod[i] = (uint32_t)id;
	}
	if (!(*pm = calloc((g->n ? g->n : 1) * (mods->n ? mods->n : 1), sizeof(**pm)))) {
		free(fmod);
		return -ENOMEM;
	}
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		const struct prof_stack *st;
		uint64_t ns;
		uint32_t pi, f, m = UINT32_MAX;
		struct program *pg;

		if (s->thread >= p->nthreads || (pi = p->threads[s->thread].process) >= p->nprocesses)
			continue;
		pg = &g->v[prog_of[pi]];
		ns = (uint64_t)s->weight * prof_period_of_thread(p, s->thread);
		pg->cpu_ns += ns;
		pg->samples += !(s->flags & PROF_SAMPLE_SPLIT);
		g->cpu_ns += ns;
		if (s->stack < p->nstacks && (st = &p->stacks[s->stack])->nframes &&
		    st->first < p->nframes && (f = p->frames[st->first].func) < p->nfuncs)
			m = fmod[f];
		if (m == UINT32_MAX)
			m = 0; /* "[unknown]", the first module (programs_analyze) */
		(*pm)[(size_t)(pg - g->v) * mods->n + m] += ns;
		if ((s->flags & PROF_SAMPLE_KERNEL) || !strcmp(mods->v[m], "[kernel]"))
			pg->kernel_ns += ns;
	}
	free(fmod);
	return 0;
}

/* The CPU in use over the run (prog_analysis.tl_*), once the programs
 * are sorted: prog_of[] gives each process's program before the sort, so
 * the series go by name. */
static int programs_timeline(const struct profile *p, struct prog_analysis *g,
			     const uint32_t *rank_of)
{
	uint64_t t0 = UINT64_MAX, t1 = 0, bin, dec, span, need;
	size_t i;

	for (i = 0; i < p->nprocesses; i++) {
		if (p->processes[i].start && p->processes[i].start < t0)
			t0 = p->processes[i].start;
		if (p->processes[i].end > t1)
			t1 = p->processes[i].end;
	}
	if (t0 == UINT64_MAX || t1 <= t0)
		return 0;
	/* the smallest 1, 2 or 5 x 10^k bin that fits the span in PROG_TL_BINS
	 * (without overflow: a damaged file's times can span 2^64) */
	span = t1 - t0;
	need = span / PROG_TL_BINS + (span % PROG_TL_BINS != 0);
	for (dec = 1;; dec *= 10) {
		if ((bin = dec) >= need || (bin = 2 * dec) >= need || (bin = 5 * dec) >= need)
			break;
		if (dec > UINT64_MAX / 100) {
			bin = need;
			break;
		}
	}
	g->tl_t0 = t0;
	g->tl_bin_ns = bin;
	g->tl_nbins = (size_t)(span / bin + (span % bin != 0));
	if (!(g->tl_cpu = calloc(g->tl_nbins * PROG_TL_SERIES, sizeof(*g->tl_cpu))))
		return -ENOMEM;
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		uint32_t pi, r;
		size_t b;

		if (s->thread >= p->nthreads || (pi = p->threads[s->thread].process) >= p->nprocesses ||
		    s->ts < t0)
			continue;
		b = (size_t)((s->ts - t0) / bin);
		if (b >= g->tl_nbins)
			b = g->tl_nbins - 1;
		r = rank_of[pi] < PROG_TL_SERIES - 1 ? rank_of[pi] : PROG_TL_SERIES - 1;
		g->tl_cpu[b * PROG_TL_SERIES + r] +=
			(uint64_t)s->weight * prof_period_of_thread(p, s->thread);
	}
	return 0;
}

/* Each process's program's rank in the sorted list. */
static int programs_rank(const struct profile *p, const struct prog_analysis *g,
			 uint32_t *prog_of)
{
	size_t i, k;

	for (i = 0; i < p->nprocesses; i++) {
		const char *name = programs_name_of(p, (uint32_t)i);

		for (k = 0; k < g->n && strcmp(g->v[k].name, name); k++)
			;
		prog_of[i] = (uint32_t)k;
	}
	return 0;
}

int programs_analyze(const struct profile *p, struct prog_analysis **out)
{
	struct prog_analysis *g = NULL;
	struct names progs = { 0 }, mods = { 0 };
	uint32_t *prog_of = NULL;
	uint64_t *pm = NULL;
	size_t i;
	int ret = -ENOMEM;

	*out = NULL;
	if (!p->nsamples || !p->nprocesses)
		return 0;
	if (!(g = calloc(1, sizeof(*g))) ||
	    !(prog_of = calloc(p->nprocesses, sizeof(*prog_of))))
		goto out;
	/* "[unknown]" first, so that every sample has a module slot */
	if (names_id(&mods, "[unknown]") < 0 ||
	    programs_of_processes(p, &progs, prog_of, g) < 0 ||
	    programs_samples(p, prog_of, g, &mods, &pm) < 0 ||
	    programs_wall(p, prog_of, g->v) < 0 || programs_hottest(p, prog_of, g->v) < 0 ||
	    programs_modules(g, &mods, pm) < 0)
		goto out;
	for (i = 0; i < g->n; i++)
		g->with_cpu += g->v[i].samples > 0;
	/* most CPU first: only the timeline refers to a program by its index
	 * after this, by its rank */
	qsort(g->v, g->n, sizeof(*g->v), prog_cmp);
	programs_rank(p, g, prog_of);
	if (programs_timeline(p, g, prog_of) < 0)
		goto out;
	*out = g;
	g = NULL;
	ret = 0;
out:
	programs_free(g);
	names_free(&progs);
	names_free(&mods);
	free(prog_of);
	free(pm);
	return ret;
}

void programs_free(struct prog_analysis *g)
{
	if (!g)
		return;
	free(g->v);
	free(g->tl_cpu);
	free(g);
}
