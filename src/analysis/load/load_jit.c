/*
 * load_jit.c — code without unwind information (docs/symbols.md): JIT_REGION
 * records into time-ordered executable regions outside every module, named
 * from the process's perf map (the session's perf-PID.map) or else one
 * "[jit] 0xSTART" function per region; and the CBN_UWM marker words of
 * stacks dropped from their frames, what they said kept and counted.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load_int.h"

/* Bytes of a session's perf map read: what the launcher copies, and the
 * jitdump lines it appends within the same cap, with room to spare. */
#define LOAD_PERFMAP_READ ((size_t)CBN_PERFMAP_MAX + (1u << 20))

/* --- regions --------------------------------------------------------------- */

void load_jit_rec(struct load *L, const struct reader_rec *r)
{
	const struct cbn_rec_jit_region *j = (const void *)r->raw;
	struct load_file *F = L->f;
	struct prof_process *pr = &L->p->processes[F->proc];
	struct load_jitev *e;

	if (r->flags & CBN_JIT_JITDUMP) {
		/* a jitdump file: the launcher read it after the run */
		pr->unwind.jitdumps++;
		return;
	}
	if (j->len == 0 || j->start + j->len < j->start)
		return;
	e = LOAD_PUSH(L, F->jitevs, F->njitevs, F->capjitevs);
	if (!e)
		return;
	e->ts = j->ts;
	e->start = j->start;
	e->len = j->len;
	e->seq = (uint32_t)F->njitevs;
	e->gone = (r->flags & CBN_JIT_GONE) != 0;
	if (!e->gone)
		pr->unwind.jit_regions++;
	/* a pc's name depends on the regions at its time, as on the modules */
	{
		uint64_t *ev = LOAD_PUSH(L, F->events, F->nevents, F->capevents);

		if (ev)
			*ev = j->ts;
	}
}

static int jitev_cmp(const void *a, const void *b)
{
	const struct load_jitev *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int jit_cmp(const void *a, const void *b)
{
	const struct load_jit *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static void jit_push(struct load *L, uint64_t start, uint64_t end, uint64_t ts, uint64_t label)
{
	struct load_file *F = L->f;
	struct load_jit *g = LOAD_PUSH(L, F->jits, F->njits, F->capjits);

	if (!g)
		return;
	g->start = start;
	g->end = end;
	g->ts = ts;
	g->gone = UINT64_MAX;
	g->label = label;
	g->func = PROF_NONE;
}

/* A GONE: every region alive that overlaps [start, end) ends at ts; what lies
 * outside that range lives on as regions of its own, with the same name (the
 * same label: functions are interned by name). */
static void jit_gone(struct load *L, uint64_t start, uint64_t end, uint64_t ts)
{
	struct load_file *F = L->f;
	size_t i, n = F->njits;

	for (i = 0; i < n && !L->nomem; i++) {
		struct load_jit g = F->jits[i];

		if (g.gone != UINT64_MAX || g.end <= start || end <= g.start)
			continue;
		F->jits[i].gone = ts;
		if (g.start < start)
			jit_push(L, g.start, start, ts, g.label);
		if (end < g.end)
			jit_push(L, end, g.end, ts, g.label);
	}
}

/* The session's perf map of the file's process: beside the file, named by
 * its pid (a missing one is normal: the program wrote none). */
static void jit_perfmap(struct load *L, const char *dir, const char *name)
{
	struct load_file *F = L->f;
	struct prof_process *pr = &L->p->processes[F->proc];
	const char *slash = strrchr(name, '/');
	char path[PATH_MAX + 64], file[64];
	int ret;
	size_t i;

	snprintf(file, sizeof(file), CBN_PERFMAP_FILE, pr->pid);
	snprintf(path, sizeof(path), "%s/%.*s%s", dir, slash ? (int)(slash + 1 - name) : 0, name,
		 file);
	ret = perfmap_read(path, LOAD_PERFMAP_READ, &F->perfmap);
	if (ret == -ENOMEM) {
		load_nomem(L);
		return;
	}
	if (ret < 0) {
		if (ret != -ENOENT)
			load_warn(L, "%s: cannot be read (%s): JIT code of pid %u is named by its "
				     "regions only", file, strerror(-ret), pr->pid);
		return;
	}
	pr->unwind.perfmap_entries = F->perfmap.n;
	if (!F->perfmap.n)
		return;
	F->pmfuncs = load_realloc(L, NULL, F->perfmap.n * sizeof(*F->pmfuncs));
	if (!F->pmfuncs)
		return;
	for (i = 0; i < F->perfmap.n; i++)
		F->pmfuncs[i] = PROF_NONE;
}

void load_jit_open(struct load *L, const char *dir, const char *name)
{
	struct load_file *F = L->f;
	size_t i;

	/* read even without regions: JIT code in memory the agent saw made
	 * executable some other way is still named by the program's map */
	jit_perfmap(L, dir, name);
	if (!F->njitevs || L->nomem)
		return;
	qsort(F->jitevs, F->njitevs, sizeof(*F->jitevs), jitev_cmp);
	for (i = 0; i < F->njitevs && !L->nomem; i++) {
		const struct load_jitev *e = &F->jitevs[i];

		if (e->gone)
			jit_gone(L, e->start, e->start + e->len, e->ts);
		else
			jit_push(L, e->start, e->start + e->len, e->ts, e->start);
	}
	for (i = 0; i < F->njits; i++) {
		uint64_t len = F->jits[i].end - F->jits[i].start;

		if (len > F->jitmaxlen)
			F->jitmaxlen = len;
	}
	if (F->njits)	/* none when every record was a GONE */
		qsort(F->jits, F->njits, sizeof(*F->jits), jit_cmp);
}

/* The region holding addr at ts: the one alive then, else (a record written
 * a little late) the one closest in time; NULL when none holds addr. */
static struct load_jit *jit_at(struct load_file *F, uint64_t addr, uint64_t ts)
{
	size_t lo = 0, hi = F->njits;
	struct load_jit *best = NULL;
	uint64_t best_dist = UINT64_MAX;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (F->jits[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0) {
		struct load_jit *g = &F->jits[lo];
		uint64_t dist;

		if (addr - g->start >= F->jitmaxlen)
			break;
		if (addr >= g->end)
			continue;
		if (g->ts <= ts && ts < g->gone)
			return g;
		dist = g->ts > ts ? g->ts - ts : ts - g->gone;
		if (dist < best_dist) {
			best_dist = dist;
			best = g;
		}
	}
	return best;
}

/* "[jit] 0xLABEL": one function per region (and what is left of it). */
static uint32_t jit_region_func(struct load *L, struct load_jit *g)
{
	char name[40];

	if (g->func == PROF_NONE) {
		snprintf(name, sizeof(name), "[jit] 0x%" PRIx64, g->label);
		g->func = intern_func(L, name, "", 0, "jit");
		if (g->func != PROF_NONE)
			L->p->funcs[g->func].flags |= PROF_FUNC_JIT | PROF_FUNC_JIT_ANON;
	}
	return g->func;
}

uint32_t load_jit_func(struct load *L, uint64_t addr, uint64_t ts)
{
	struct load_file *F = L->f;
	const struct perfmap_entry *e = F->perfmap.n ? perfmap_find(&F->perfmap, addr) : NULL;
	struct load_jit *g;
	size_t k;

	if (!e) {
		g = F->njits ? jit_at(F, addr, ts) : NULL;
		return g ? jit_region_func(L, g) : PROF_NONE;
	}
	k = (size_t)(e - F->perfmap.v);
	if (F->pmfuncs[k] == PROF_NONE) {
		F->pmfuncs[k] = intern_func(L, e->name, "", 0, "jit");
		if (F->pmfuncs[k] != PROF_NONE)
			L->p->funcs[F->pmfuncs[k]].flags |= PROF_FUNC_JIT;
	}
	return F->pmfuncs[k];
}

/* --- unwinding markers ----------------------------------------------------- */

/* Where unwinding stopped at pc (looked up at addr): the module's file name,
 * its JIT region's "[jit] 0xSTART", else "[unknown]". */
static const char *uwm_place(struct load *L, uint64_t addr, uint64_t ts)
{
	struct load_mod *m = load_mod_at(L->f, addr, ts);
	struct load_jit *g;
	char name[40];

	if (m)
		return load_intern(L, sym_module_filename(L->sym, m->sym));
	g = L->f->njits ? jit_at(L->f, addr, ts) : NULL;
	if (!g)
		return load_intern(L, "[unknown]");
	snprintf(name, sizeof(name), "[jit] 0x%" PRIx64, g->label);
	return load_intern(L, name);
}

uint32_t load_uwm_strip(struct load *L, const uint64_t *pcs, uint32_t n, uint64_t ts, int ret_all,
			uint64_t *out, struct load_uwm *u)
{
	uint32_t i, k = 0, last = UINT32_MAX; /* the last native word kept */
	int stopped = 0;

	u->unwind = 0;
	u->stop_at = NULL;
	for (i = 0; i < n; i++) {
		uint32_t kind, cause;
		uint64_t addr;

		if (!CBN_UWM_IS(pcs[i])) {
			if (CBN_PYW_IS(pcs[i])) {
				out[k++] = pcs[i];
				continue;
			}
			/* a STOP is the last native word: past it, only the
			 * Python frames of the stack, which do not come from
			 * unwinding */
			if (stopped)
				continue;
			last = k;
			out[k++] = pcs[i];
			continue;
		}
		kind = CBN_UWM_KIND(pcs[i]);
		if (kind == CBN_UWM_FP)
			u->unwind |= PROF_UNWIND_FP;
		else if (kind == CBN_UWM_SCAN)
			u->unwind |= PROF_UNWIND_SCAN;
		if (kind != CBN_UWM_STOP || stopped)
			continue;
		stopped = 1;
		switch (CBN_UWM_WHERE(pcs[i])) {
		case CBN_UWM_JIT: cause = PROF_UNWIND_JIT; break;
		case CBN_UWM_NOCFI: cause = PROF_UNWIND_NOCFI; break;
		default: cause = PROF_UNWIND_SCANLIMIT; break;
		}
		u->unwind |= PROF_UNWIND_STOP_SET(cause);
		if (last == UINT32_MAX) {
			u->stop_at = load_intern(L, "[unknown]");
			continue;
		}
		addr = (last == 0 && !ret_all) ? out[last] : out[last] - 1;
		u->stop_at = uwm_place(L, addr, ts);
	}
	return k;
}

/* --- counts ---------------------------------------------------------------- */

struct ustop_probe {
	const struct load_file *F;
	const char *place;
	uint32_t cause;
};

static int ustop_eq(const void *ctx, uint32_t v)
{
	const struct ustop_probe *s = ctx;

	return s->F->ustops[v].place == s->place && s->F->ustops[v].cause == s->cause;
}

void load_uwm_count(struct load *L, const struct load_uwm *u, uint64_t weight)
{
	struct load_file *F = L->f;
	struct prof_unwind_proc *pu = &L->p->processes[F->proc].unwind;
	struct ustop_probe probe = {F, u->stop_at, PROF_UNWIND_STOP(u->unwind)};
	struct load_ustop *s;
	uint64_t h;
	uint32_t v;

	if (u->unwind & PROF_UNWIND_SCAN) {
		pu->scan_samples++;
		pu->scan_weight += weight;
	} else if (u->unwind & PROF_UNWIND_FP) {
		pu->fp_samples++;
		pu->fp_weight += weight;
	}
	if (!probe.cause || !probe.place)
		return;
	pu->stop_samples++;
	pu->stop_weight += weight;
	/* places are interned: the pointer is the string */
	h = util_mix64((uintptr_t)probe.place ^ probe.cause);
	v = util_map_find(&F->ustopmap, h, ustop_eq, &probe);
	if (v == UINT32_MAX) {
		s = LOAD_PUSH(L, F->ustops, F->nustops, F->capustops);
		if (!s)
			return;
		s->place = probe.place;
		s->cause = probe.cause;
		s->samples = s->weight = 0;
		if (load_map_put(L, &F->ustopmap, h, (uint32_t)(F->nustops - 1)) < 0)
			return;
	} else {
		s = &F->ustops[v];
	}
	s->samples++;
	s->weight += weight;
}

static int ustop_cmp(const void *a, const void *b)
{
	const struct prof_unwind_stop *x = a, *y = b;
	int c;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	c = strcmp(x->place, y->place);
	return c ? c : (x->cause < y->cause ? -1 : x->cause > y->cause);
}

void load_jit_finish(struct load *L)
{
	struct profile *p = L->p;
	struct load_file *F = L->f;
	size_t i, first = p->nunwind_stops;

	for (i = 0; i < F->nustops; i++) {
		struct prof_unwind_stop *s = LOAD_PUSH(L, p->unwind_stops, p->nunwind_stops,
						       L->capustops);

		if (!s)
			return;
		s->process = F->proc;
		s->cause = F->ustops[i].cause;
		s->place = F->ustops[i].place;
		s->samples = F->ustops[i].samples;
		s->weight = F->ustops[i].weight;
	}
	if (p->nunwind_stops > first)
		qsort(p->unwind_stops + first, p->nunwind_stops - first, sizeof(*p->unwind_stops),
		      ustop_cmp);
}

void load_jit_free(struct load_file *F)
{
	free(F->jitevs);
	free(F->codefiles);
	free(F->jits);
	free(F->pmfuncs);
	free(F->ustops);
	util_map_free(&F->ustopmap);
	perfmap_free(&F->perfmap);
}

/* A pc in no module: JIT code's function (load_jit.c) or "[unknown]". */
void load_push_nomod(struct load *L, uint64_t pc, uint64_t addr, uint64_t ts)
{
	struct load_frame lf = {0, 0, 0, 0, ""};

	lf.func = pc ? load_jit_func(L, addr, ts) : PROF_NONE;
	if (lf.func == PROF_NONE)
		load_push_unknown(L, pc);
	else
		load_push_frame(L, &lf, pc);
}
