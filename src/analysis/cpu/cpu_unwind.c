/*
 * cpu_unwind.c — unwinding past code without unwind information in the CPU
 * view (docs/symbols.md, "Code without unwind information"): how many samples
 * went on past such code by frame pointer or by scanning the stack, and where
 * and why the others stopped early, all processes together; from the
 * loader's counts (prof_process.unwind, prof.unwind_stops).  Launcher side
 * only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

/* A stop's share of the CPU below which the report says nothing of it. */
#define CPU_UNWIND_STOP_MIN 0.005
/* Places named in the data-quality line. */
#define CPU_UNWIND_PLACES 3

const char *cpu_unwind_cause_words(uint32_t cause)
{
	switch (cause) {
	case PROF_UNWIND_JIT: return "JIT code";
	case PROF_UNWIND_NOCFI: return "no CFI";
	default: return "scan limit";
	}
}

const char *cpu_unwind_cause_key(uint32_t cause)
{
	switch (cause) {
	case PROF_UNWIND_JIT: return "jit";
	case PROF_UNWIND_NOCFI: return "no_cfi";
	default: return "scan_limit";
	}
}

static int stop_place_cmp(const void *a, const void *b)
{
	const struct cpu_unwind_stop *x = a, *y = b;
	int c = strcmp(x->place, y->place);

	return c ? c : (x->cause < y->cause ? -1 : x->cause > y->cause);
}

static int stop_ns_cmp(const void *a, const void *b)
{
	const struct cpu_unwind_stop *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return stop_place_cmp(a, b);
}

/* Samples whose leaf is JIT code: named by the program, or a region's row. */
static void cpu_unwind_jit(const struct profile *p, struct cpu_unwind *u)
{
	size_t i;

	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		const struct prof_stack *st;
		const struct prof_func *f;
		uint64_t ns;

		if (s->stack >= p->nstacks || (s->flags & PROF_SAMPLE_KERNEL))
			continue;
		st = &p->stacks[s->stack];
		/* the checks cpu_aggregate makes: a profile is not trusted */
		if (!st->nframes || st->first >= p->nframes ||
		    p->frames[st->first].func >= p->nfuncs)
			continue;
		f = &p->funcs[p->frames[st->first].func];
		if (!(f->flags & PROF_FUNC_JIT))
			continue;
		ns = (uint64_t)s->weight * prof_period_of_thread(p, s->thread);
		u->jit_samples++;
		u->jit_ns += ns;
		if (f->flags & PROF_FUNC_JIT_ANON) {
			u->jit_anon_samples++;
			u->jit_anon_ns += ns;
		}
	}
	if (u->jit_samples)
		u->present = 1;
}

int cpu_unwind(const struct profile *p, struct cpu_unwind *u)
{
	size_t i, n;

	memset(u, 0, sizeof(*u));
	cpu_unwind_jit(p, u);
	for (i = 0; i < p->nprocesses; i++) {
		const struct prof_unwind_proc *pu = &p->processes[i].unwind;
		uint64_t period = prof_period_of_process(p, (uint32_t)i);

		if (!pu->fp_samples && !pu->scan_samples && !pu->stop_samples)
			continue;
		u->present = 1;
		u->fp_samples += pu->fp_samples;
		u->fp_ns += pu->fp_weight * period;
		u->scan_samples += pu->scan_samples;
		u->scan_ns += pu->scan_weight * period;
		u->stop_samples += pu->stop_samples;
		u->stop_ns += pu->stop_weight * period;
	}
	if (!p->nunwind_stops)
		return 0;
	u->stops = calloc(p->nunwind_stops, sizeof(*u->stops));
	if (!u->stops)
		return -1;
	for (i = 0; i < p->nunwind_stops; i++) {
		const struct prof_unwind_stop *s = &p->unwind_stops[i];

		u->stops[i].place = s->place ? s->place : "[unknown]";
		u->stops[i].cause = s->cause;
		u->stops[i].samples = s->samples;
		u->stops[i].ns = s->weight * prof_period_of_process(p, s->process);
	}
	/* one row per place and cause, whichever processes it came from */
	qsort(u->stops, p->nunwind_stops, sizeof(*u->stops), stop_place_cmp);
	for (i = 0, n = 0; i < p->nunwind_stops; i++) {
		if (n && !stop_place_cmp(&u->stops[n - 1], &u->stops[i])) {
			u->stops[n - 1].samples += u->stops[i].samples;
			u->stops[n - 1].ns += u->stops[i].ns;
			continue;
		}
		u->stops[n++] = u->stops[i];
	}
	u->nstops = n;
	qsort(u->stops, n, sizeof(*u->stops), stop_ns_cmp);
	return 0;
}

static double cpu_unwind_pct(const struct cpu_profile *c, uint64_t ns)
{
	return c->cpu_ns ? 100.0 * (double)ns / (double)c->cpu_ns : 0.0;
}

/* "unwinding stopped early in 7.8% of the samples: [jit] 0x7f.. 6.1% (JIT
 * code), libfoo.so 1.7% (no CFI), ..." with what it means. */
static void cpu_unwind_stop_line(const struct cpu_profile *c, char *buf, size_t len)
{
	const struct cpu_unwind *u = &c->unwind;
	size_t off = 0, i;
	uint64_t rest_ns = 0;
	int w;

#define CPU_UW_PUT(...)                                                              \
	do {                                                                         \
		w = snprintf(buf + off, len - off, __VA_ARGS__);                     \
		off = w < 0 || (size_t)w >= len - off ? len - 1 : off + (size_t)w; \
	} while (0)
	CPU_UW_PUT("unwinding stopped early in %.1f%% of the samples:",
		   cpu_unwind_pct(c, u->stop_ns));
	for (i = 0; i < u->nstops; i++) {
		if (i >= CPU_UNWIND_PLACES) {
			rest_ns += u->stops[i].ns;
			continue;
		}
		CPU_UW_PUT("%s %s %.1f%% (%s)", i ? "," : "", u->stops[i].place,
			   cpu_unwind_pct(c, u->stops[i].ns),
			   cpu_unwind_cause_words(u->stops[i].cause));
	}
	if (u->nstops > CPU_UNWIND_PLACES)
		CPU_UW_PUT(", %zu more places %.1f%%", u->nstops - CPU_UNWIND_PLACES,
			   cpu_unwind_pct(c, rest_ns));
	CPU_UW_PUT("; there the code has no unwind information and the agent found neither a "
		   "frame pointer nor a return address within %u words of the stack, so the "
		   "callers of those samples are missing and their cumtime is low "
		   "(docs/symbols.md, \"Code without unwind information\")", CBN_UWM_SCAN_WORDS);
#undef CPU_UW_PUT
}

/* "12.3% of the samples ran in JIT code ...": how much of it has names. */
static void cpu_unwind_jit_line(const struct cpu_profile *c, char *buf, size_t len)
{
	const struct cpu_unwind *u = &c->unwind;
	uint64_t named = u->jit_ns - u->jit_anon_ns;

	if (!u->jit_anon_ns)
		snprintf(buf, len, "%.1f%% of the samples ran in JIT code (generated at run time, "
			 "outside every module), all of it named by the program's perf map or "
			 "jitdump (module [jit])", cpu_unwind_pct(c, u->jit_ns));
	else
		snprintf(buf, len, "%.1f%% of the samples ran in JIT code (generated at run time, "
			 "outside every module): %.1f%% named by the program's perf map or "
			 "jitdump, %.1f%% in code it named nowhere, one row per region (\"[jit] 0xSTART\"); "
			 "docs/symbols.md says how to make a JIT write a perf map",
			 cpu_unwind_pct(c, u->jit_ns), cpu_unwind_pct(c, named),
			 cpu_unwind_pct(c, u->jit_anon_ns));
}

int cpu_unwind_warning(const struct cpu_profile *c, int k, char *buf, size_t len)
{
	const struct cpu_unwind *u = &c->unwind;

	if (!u->present || !len)
		return 0;
	switch (k) {
	case 0:
		if (u->stop_samples && c->cpu_ns &&
		    (double)u->stop_ns >= CPU_UNWIND_STOP_MIN * (double)c->cpu_ns) {
			cpu_unwind_stop_line(c, buf, len);
			return 1;
		}
		/* fall through */
	case 1:
		if (u->jit_ns && c->cpu_ns) {
			cpu_unwind_jit_line(c, buf, len);
			return 2;
		}
		/* fall through */
	case 2:
		if (u->fp_samples || u->scan_samples) {
			snprintf(buf, len, "%.1f%% of the samples (%llu) were unwound past code "
				 "without unwind information, %.1f%% by frame pointer and %.1f%% "
				 "by scanning the stack for return addresses: the callers found "
				 "that way are likely but not certain, a scan's least (it may "
				 "take a stale return address; docs/symbols.md)",
				 cpu_unwind_pct(c, u->fp_ns + u->scan_ns),
				 (unsigned long long)(u->fp_samples + u->scan_samples),
				 cpu_unwind_pct(c, u->fp_ns), cpu_unwind_pct(c, u->scan_ns));
			return 3;
		}
		/* fall through */
	default:
		return 0;
	}
}
