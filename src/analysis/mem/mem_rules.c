/*
 * mem_rules.c — the host memory recommendations: one test per rule over the
 * memory view (memory.h) and the table mem_rules[] (at the end) that gives
 * each its id, advice and order in the report (docs/reading-the-report.md,
 * "Memory").  Findings land in mem_analysis.recos.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory.h"
#include "names.h"
#include "rules.h"
#include "util.h"

#define MEM_CHURN_MIN 100000.0         /* alloc-churn: short-lived allocations at least */
#define MEM_CHURN_SHARE 0.5            /* ... and this share of the site's allocations */
#define MEM_CHURN_RATE 100000.0        /* ... and this many per second of the run: at
					* 50-100 ns a malloc/free pair, 0.5-1 % of a core
					* (fewer cost nothing worth a recommendation) */
/* Thresholds scale with the program: advice about a peak or a leak is worth
 * reading when it is a real part of what the process uses, not 1 MiB. */
#define MEM_PEAK_SHARE 0.5             /* peak-one-site: one site holds this much of the peak */
#define MEM_PEAK_MIN (32ull << 20)     /* ... of a peak of at least 32 MiB ... */
#define MEM_PEAK_RSS 0.25              /* ... and a quarter of its RSS peak (when read) */
#define MEM_LEAK_MIN 65536.0           /* leak: bytes never freed by one site, at least ... */
#define MEM_LEAK_SHARE 0.01            /* ... and 1 % of the largest host peak */
#define MEM_GROW_SPAN 0.5              /* leak-growing: leaked births span half the run */
#define MEM_GROW_STEPS 3               /* ... or fall in at least 3 (and half) of the steps */
#define MEM_RETAINED_MIN (64ull << 20) /* rss-retained: RSS above heap + baseline, at least */

struct mem_rule_ctx {
	const struct mem_analysis *m;
	const struct profile *p;
	uint64_t run_ns;                 /* the host processes' run, for rates */
};



/* ns from the start of the run to ts (0 before it). */
static double since(const struct profile *p, uint64_t ts)
{
	return ts > p->start_ns ? (double)(ts - p->start_ns) : 0.0;
}

/* "file:line(function)", or "[no stack]". */
static char *site_str(char *buf, size_t len, const struct profile *p, const struct mem_site *s)
{
	char bare[512];
	const char *fn;

	if (s->func >= p->nfuncs) {
		snprintf(buf, len, "[no stack]");
		return buf;
	}
	/* as the sites table prints it: file:line(func) without parameters,
	 * [module]:0(func) without a line, and the wrapper it was found past */
	fn = names_bare_copy(bare, sizeof(bare), p->funcs[s->func].name ? p->funcs[s->func].name
									 : "?");
	if (s->file && *s->file)
		snprintf(buf, len, "%s:%u(%s)%s", s->file, s->line, fn, s->inlined ? " [inlined]" : "");
	else
		snprintf(buf, len, "[%s]:0(%s)", p->funcs[s->func].module && *p->funcs[s->func].module
						 ? p->funcs[s->func].module : "?", fn);
	if (s->kind == MEM_SPACE_HOST && s->via < p->nfuncs) {
		size_t n = strlen(buf);

		snprintf(buf + n, len - n, " via %s",
			 names_bare_copy(bare, sizeof(bare),
					 p->funcs[s->via].name ? p->funcs[s->via].name : "?"));
	}
	return buf;
}

static const char *est(const struct mem_analysis *m)
{
	return m->exact ? "" : "~";
}

static int churn(const void *ctx, struct rules_pass *pass)
{
	const struct mem_rule_ctx *c = ctx;
	const struct mem_analysis *m = c->m;
	uint32_t *order;
	size_t i, n = 0;
	int ret = 0;

	if (!m->nsites || !(order = calloc(m->nsites, sizeof(*order))))
		return m->nsites ? -ENOMEM : 0;
	for (i = 0; i < m->nsites; i++)
		if (m->sites[i].kind == MEM_SPACE_HOST && m->sites[i].short_lived >= MEM_CHURN_MIN &&
		    m->sites[i].short_lived >= MEM_CHURN_SHARE * m->sites[i].allocs &&
		    (!c->run_ns ||
		     m->sites[i].short_lived * 1e9 / (double)c->run_ns >= MEM_CHURN_RATE))
			order[n++] = (uint32_t)i;
	/* most short-lived allocations first (a selection: n is small) */
	for (i = 0; i < n && ret == 0; i++) {
		const struct mem_site *s;
		char b1[64], b2[1024];
		size_t j, best = i;
		uint32_t t;

		for (j = i + 1; j < n; j++)
			if (m->sites[order[j]].short_lived > m->sites[order[best]].short_lived)
				best = j;
		t = order[i];
		order[i] = order[best];
		order[best] = t;
		s = &m->sites[order[i]];
		ret = rules_fire(pass,
				 "%s%.0f allocations (%s%.0f/s), %.0f%% freed within 1 ms (median "
				 "lifetime %s), %s allocated, at %s",
				 est(m), s->allocs, est(m),
				 c->run_ns ? s->allocs * 1e9 / (double)c->run_ns : 0.0,
				 s->allocs > 0 ? 100.0 * s->short_lived / s->allocs : 0.0,
				 util_fmt_dur(b1, sizeof(b1), (double)s->median_life_ns),
				 util_fmt_bytes(b2, 64, s->bytes), site_str(b2 + 64, sizeof(b2) - 64, c->p, s));
	}
	free(order);
	return ret;
}

static int peak_one_site(const void *ctx, struct rules_pass *pass)
{
	const struct mem_rule_ctx *c = ctx;
	const struct mem_analysis *m = c->m;
	size_t i;
	int ret = 0;

	for (i = 0; i < m->nspaces && ret == 0; i++) {
		const struct mem_space *sp = &m->spaces[i];
		const struct mem_site *s;
		char b1[64], b2[64], b3[64], b4[1024];

		if (sp->kind != MEM_SPACE_HOST || sp->peak < MEM_PEAK_MIN ||
		    (sp->rss_peak && (double)sp->peak < MEM_PEAK_RSS * (double)sp->rss_peak) ||
		    !sp->nat_peak ||
		    sp->at_peak[0].site >= m->nsites ||
		    sp->at_peak[0].bytes < MEM_PEAK_SHARE * (double)sp->peak)
			continue;
		s = &m->sites[sp->at_peak[0].site];
		ret = rules_fire(pass, "%s: %s%s of the %s peak (%.0f%%) at %s since start held by %s",
				 sp->name, est(m), util_fmt_bytes(b1, sizeof(b1), sp->at_peak[0].bytes),
				 util_fmt_bytes(b2, sizeof(b2), (double)sp->peak),
				 100.0 * sp->at_peak[0].bytes / (double)sp->peak,
				 util_fmt_dur(b3, sizeof(b3), since(c->p, sp->peak_ts)),
				 site_str(b4, sizeof(b4), c->p, s));
	}
	return ret;
}

/* The least leak worth a finding: MEM_LEAK_MIN, and MEM_LEAK_SHARE of the
 * largest host peak (a 64 KiB cache is nothing to a 10 GiB process). */
static double leak_min(const struct mem_analysis *m)
{
	double top = 0;
	size_t i;

	for (i = 0; i < m->nspaces; i++)
		if (m->spaces[i].kind == MEM_SPACE_HOST && (double)m->spaces[i].peak > top)
			top = (double)m->spaces[i].peak;
	return MEM_LEAK_SHARE * top > MEM_LEAK_MIN ? MEM_LEAK_SHARE * top : MEM_LEAK_MIN;
}

/* A leak that grows: never-freed blocks born in most of the repeated steps,
 * or (without steps) over at least half of the run. */
static int grows(const struct mem_site *s)
{
	if (s->steps >= MEM_GROW_STEPS)
		return s->leak_steps >= MEM_GROW_STEPS && 2 * s->leak_steps >= s->steps;
	return s->leak_span_ns && s->leak_last_ts > s->leak_first_ts &&
	       (double)(s->leak_last_ts - s->leak_first_ts) >= MEM_GROW_SPAN * (double)s->leak_span_ns;
}

static int leak_growing(const void *ctx, struct rules_pass *pass)
{
	const struct mem_rule_ctx *c = ctx;
	const struct mem_analysis *m = c->m;
	size_t i;
	int ret = 0;

	for (i = 0; i < m->nleaks && ret == 0; i++) {
		const struct mem_site *s = &m->sites[m->leaks[i]];
		char b1[64], b2[64], b3[64], b4[1024];

		if (s->kind != MEM_SPACE_HOST || s->live_end_bytes < leak_min(m) || !grows(s))
			continue;
		if (s->steps >= MEM_GROW_STEPS)
			ret = rules_fire(pass, "%s%s never freed, born in %u of %u steps (%s%s per "
					       "step), at %s",
					 est(m), util_fmt_bytes(b1, sizeof(b1), s->live_end_bytes), s->leak_steps,
					 s->steps, est(m),
					 util_fmt_bytes(b2, sizeof(b2), s->live_end_bytes / s->steps),
					 site_str(b4, sizeof(b4), c->p, s));
		else
			ret = rules_fire(pass, "%s%s in %s%.0f blocks never freed, allocated from %s "
					       "to %s of a %s run (%s%s/s), at %s",
					 est(m), util_fmt_bytes(b1, sizeof(b1), s->live_end_bytes), est(m),
					 s->live_end_blocks,
					 util_fmt_dur(b2, sizeof(b2), since(c->p, s->leak_first_ts)),
					 util_fmt_dur(b3, sizeof(b3), since(c->p, s->leak_last_ts)),
					 util_fmt_dur(b4, 64, (double)s->leak_span_ns), est(m),
					 util_fmt_bytes(b4 + 64, 64, s->live_end_bytes * 1e9 / (double)s->leak_span_ns),
					 site_str(b4 + 128, sizeof(b4) - 128, c->p, s));
	}
	return ret;
}

static int leak(const void *ctx, struct rules_pass *pass)
{
	const struct mem_rule_ctx *c = ctx;
	const struct mem_analysis *m = c->m;
	size_t i;
	int ret = 0;

	for (i = 0; i < m->nleaks && ret == 0; i++) {
		const struct mem_site *s = &m->sites[m->leaks[i]];
		char b1[64], b4[1024];

		if (s->kind != MEM_SPACE_HOST || s->live_end_bytes < leak_min(m) || grows(s))
			continue;
		ret = rules_fire(pass, "%s%s in %s%.0f blocks still allocated at exit, at %s", est(m),
				 util_fmt_bytes(b1, sizeof(b1), s->live_end_bytes), est(m), s->live_end_blocks,
				 site_str(b4, sizeof(b4), c->p, s));
	}
	return ret;
}

static int rss_retained(const void *ctx, struct rules_pass *pass)
{
	const struct mem_rule_ctx *c = ctx;
	const struct mem_analysis *m = c->m;
	size_t i, j;
	int ret = 0;

	for (i = 0; i < m->nspaces && ret == 0; i++) {
		const struct mem_space *sp = &m->spaces[i];
		const struct mem_point *base = NULL, *worst = NULL;
		double gap0 = 0, worst_extra = 0;
		char b1[64], b2[64], b3[64], b4[64];

		if (sp->kind != MEM_SPACE_HOST)
			continue;
		/* the first RSS reading sets the baseline: code, stacks, the profiler */
		for (j = 0; j < sp->ntimeline; j++) {
			const struct mem_point *pt = &sp->timeline[j];
			double extra;

			if (!pt->rss)
				continue;
			if (!base) {
				base = pt;
				gap0 = (double)pt->rss - (double)pt->live;
				continue;
			}
			extra = (double)pt->rss - (double)pt->live - gap0;
			if (extra > worst_extra) {
				worst_extra = extra;
				worst = pt;
			}
		}
		if (!worst || worst_extra < (double)MEM_RETAINED_MIN ||
		    worst_extra < (double)(worst->live > 0 ? worst->live : 0))
			continue;
		ret = rules_fire(pass, "%s: RSS %s at %s since start while the live heap was %s%s: "
				       "%s more than at start (RSS includes profiler overhead)",
				 sp->name, util_fmt_bytes(b1, sizeof(b1), (double)worst->rss),
				 util_fmt_dur(b2, sizeof(b2), since(c->p, worst->ts)),
				 sp->peak_exact ? "" : "~", util_fmt_bytes(b3, sizeof(b3), (double)worst->live),
				 util_fmt_bytes(b4, sizeof(b4), worst_extra));
	}
	return ret;
}

/* The rules in report order; ids are public (JSON "id"). */
static const struct rule mem_rules[] = {
	{ "alloc-churn", churn,
	  "Many short-lived allocations from one site cost allocator time and cache misses: "
	  "hoist the buffer out of the loop and reuse it, reserve() containers up front, or use "
	  "a stack buffer or an arena for per-iteration objects.", 3 },
	{ "peak-one-site", peak_one_site,
	  "One allocation site holds most of the memory at the peak: shrink or stream that "
	  "buffer (work in chunks, a smaller element type), or free it before the next large "
	  "allocation.", 3 },
	{ "leak-growing", leak_growing,
	  "Never-freed memory from this site grows through the run (a leak per step or "
	  "iteration): find the missing free, or bound the cache or list that keeps these "
	  "blocks.", 3 },
	{ "leak", leak,
	  "Memory allocated here is never freed before exit: free it when done, or ignore this "
	  "if it lives for the whole run on purpose (a cache, a global).", 3 },
	{ "rss-retained", rss_retained,
	  "The process keeps far more resident memory than its live heap (freed memory the "
	  "allocator kept, or fragmentation): call malloc_trim(0) after freeing large "
	  "structures, lower glibc's trim and mmap thresholds (mallopt M_TRIM_THRESHOLD / "
	  "M_MMAP_THRESHOLD or GLIBC_TUNABLES=glibc.malloc.trim_threshold=...), cap arenas with "
	  "glibc.malloc.arena_max, or try jemalloc or tcmalloc.", 3 },
};

int mem_rules_build(struct mem_analysis *m, const struct profile *p)
{
	struct mem_rule_ctx ctx = { .m = m, .p = p };
	struct rule_hit *hits;
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t nhits, i;
	int ret;

	for (i = 0; i < m->nspaces; i++) {
		const struct prof_process *pr;

		if (m->spaces[i].kind != MEM_SPACE_HOST || m->spaces[i].process >= p->nprocesses)
			continue;
		pr = &p->processes[m->spaces[i].process];
		if (pr->start && pr->start < lo)
			lo = pr->start;
		if (pr->end > hi)
			hi = pr->end;
	}
	ctx.run_ns = hi > lo ? hi - lo : p->wall_ns;
	ret = rules_run(mem_rules, sizeof(mem_rules) / sizeof(mem_rules[0]), &ctx, &hits, &nhits);
	if (ret)
		return ret;
	/* appended: the GPU side may have findings of its own already */
	return rules_keep(hits, nhits, &m->recos, &m->nrecos);
}
