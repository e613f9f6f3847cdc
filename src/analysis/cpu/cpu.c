/*
 * cpu.c — CPU aggregation: self/total per function (each function counted once
 * per sample however often it recurses), self per source line, per thread and
 * per process totals, and the pstats sort orders of the cProfile table.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "util.h"

/* --- self time per (file, line, function) -------------------------------- */

struct cpu_lmap {
	struct cpu_line *v;      /* the lines, in the order first seen */
	size_t n, cap;
	struct util_map index;   /* (file, line, func) -> v[] */
};

struct cpu_line_probe {
	const struct cpu_lmap *m;
	const char *file;
	uint32_t line, func;
};

static int cpu_line_eq(const void *ctx, uint32_t v)
{
	const struct cpu_line_probe *k = ctx;
	const struct cpu_line *e = &k->m->v[v];

	return e->line == k->line && e->func == k->func &&
	       (e->file == k->file || strcmp(e->file, k->file) == 0);
}

static int cpu_lmap_add(struct cpu_lmap *m, const char *file, uint32_t line, uint32_t func,
			uint64_t w, uint64_t ns)
{
	struct cpu_line_probe k = {m, file, line, func};
	uint64_t h = util_fnv1a(&func, sizeof(func),
				util_fnv1a(&line, sizeof(line), util_fnv1a_str(file, UTIL_FNV_INIT)));
	uint32_t v = util_map_find(&m->index, h, cpu_line_eq, &k);
	struct cpu_line *e;

	if (v == UINT32_MAX) {
		if (m->n >= UINT32_MAX - 1 || util_grow((void **)&m->v, &m->cap, m->n, sizeof(*m->v)) < 0 ||
		    util_map_put(&m->index, h, (uint32_t)m->n) < 0)
			return -ENOMEM;
		e = &m->v[m->n++];
		memset(e, 0, sizeof(*e));
		e->file = file;
		e->line = line;
		e->func = func;
	} else {
		e = &m->v[v];
	}
	e->self_w += w;
	e->self_ns += ns;
	return 0;
}

static int cpu_line_cmp(const void *a, const void *b)
{
	const struct cpu_line *x = a, *y = b;
	int c;

	if (x->self_ns != y->self_ns)
		return x->self_ns > y->self_ns ? -1 : 1;
	if (x->self_w != y->self_w)
		return x->self_w > y->self_w ? -1 : 1;
	c = strcmp(x->file, y->file);
	if (c)
		return c;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* --- aggregation ------------------------------------------------------------ */

/*
 * Exact CPU time as the kernel counted it (THREAD_END), next to the sampled
 * one.  A process total is known only when every one of its threads has one
 * (a thread still running at a crash or SIGKILL has none), and the run total
 * only when every process's is: a partial sum would read as a measurement.
 */
static int cpu_measured(const struct profile *p, struct cpu_profile *c)
{
	uint8_t *unknown = calloc(p->nprocesses ? p->nprocesses : 1, 1);
	size_t i;
	int all = p->nprocesses > 0;

	if (!unknown)
		return -ENOMEM;

	for (i = 0; i < p->nthreads; i++) {
		const struct prof_thread *th = &p->threads[i];

		c->threads[i].measured_ns = th->cpu_ns;
		if (th->process >= p->nprocesses)
			continue;
		if (!th->cpu_ns)
			unknown[th->process] = 1;
		c->procs[th->process].measured_ns += th->cpu_ns;
	}
	for (i = 0; i < p->nprocesses; i++) {
		if (unknown[i])
			c->procs[i].measured_ns = 0;
		if (!c->procs[i].measured_ns)
			all = 0;
		c->measured_ns += c->procs[i].measured_ns;
	}
	if (!all)
		c->measured_ns = 0;
	free(unknown);
	return 0;
}

/* The processes' figures summed: losses by reason, how the sampler ran,
 * the agent's overhead. */
static void cpu_sum_processes(const struct profile *p, struct cpu_profile *c)
{
	size_t i, k;

	for (i = 0; i < p->nprocesses; i++) {
		c->procs[i].process = (uint32_t)i;
		for (k = 0; k < CBN_LOST_NREASONS; k++) {
			c->lost[k] += p->processes[i].lost[k];
			c->procs[i].lost += p->processes[i].lost[k];
		}
	}
	for (k = 0; k < CBN_LOST_NREASONS; k++)
		c->lost_total += c->lost[k];
	for (i = 0; i < p->nprocesses; i++) {
		const struct prof_process *pr = &p->processes[i];
		struct cpu_sampler *sm = &c->sampler;

		sm->threads_perf += pr->threads_perf;
		sm->threads_timer += pr->threads_timer;
		sm->notes |= pr->notes;
		if (!sm->timer_reason && pr->threads_timer && pr->timer_reason && *pr->timer_reason)
			sm->timer_reason = pr->timer_reason;
		if (i == 0) {
			sm->signo = pr->signo;
			sm->signo_first = pr->signo_first;
		}
		for (k = 0; k < CBN_PCONLY_NREASONS; k++)
			sm->pc_only_why[k] += pr->pc_only_why[k];
		for (k = 0; k < CBN_UNSAMPLED_NREASONS; k++)
			sm->unsampled_why[k] += pr->unsampled_why[k];
		if (pr->kstack_state == CBN_KSTACK_TAKEN)
			sm->kstack_state = CBN_KSTACK_TAKEN;
		else if (pr->kstack_state == CBN_KSTACK_OFF && !sm->kstack_state)
			sm->kstack_state = CBN_KSTACK_OFF;
		if (!sm->kstack_reason && pr->kstack_reason && *pr->kstack_reason)
			sm->kstack_reason = pr->kstack_reason;
		sm->kstack_threads += pr->threads_kstacks;
		sm->kstack_samples += pr->kstack_samples;
		sm->kstack_lost += pr->kstack_lost;
		sm->kstack_placed += pr->kstack_placed;
		sm->kstack_unplaced += pr->kstack_unplaced;
		sm->kstack_parks += pr->kstack_parks;
		sm->kstack_unparks += pr->kstack_unparks;
		sm->ucheck.samples += pr->ucheck.samples;
		sm->ucheck.frames += pr->ucheck.frames;
		sm->ucheck.differed += pr->ucheck.differed;
		sm->ucheck.cfi_checked += pr->ucheck.cfi_checked;
		sm->ucheck.cfi_differed += pr->ucheck.cfi_differed;
		sm->ucheck.fast += pr->ucheck.fast;
		if (!sm->ucheck.first && pr->ucheck.first) {
			sm->ucheck.first = 1;
			sm->ucheck.first_at = pr->ucheck.first_at;
			sm->ucheck.first_cached_pc = pr->ucheck.first_cached_pc;
			sm->ucheck.first_full_pc = pr->ucheck.first_full_pc;
		}
		c->overhead.sampled_ns += pr->overhead_weight * prof_period_of_process(p, (uint32_t)i);
		c->overhead.samples += pr->overhead_samples;
		c->overhead.threads_ns += pr->overhead_threads_ns;
		c->overhead.handler_ns += pr->overhead_site_ns[CBN_OVH_HANDLER];
		c->overhead.startup_ns += pr->overhead_init_ns;
	}
	c->overhead.launcher_ns = p->launcher_ns;
	c->overhead.total_ns = c->overhead.sampled_ns + c->overhead.threads_ns +
			       c->overhead.handler_ns + c->overhead.startup_ns +
			       c->overhead.launcher_ns;
}

/* Samples → the run's, threads', processes' and stacks' weight and ns,
 * and the threads seen. */
static void cpu_sum_samples(const struct profile *p, struct cpu_profile *c, uint64_t *stack_w,
			    uint64_t *stack_ns)
{
	size_t i;

	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		uint64_t ns = (uint64_t)s->weight * prof_period_of_thread(p, s->thread);

		/* the kernel share of a record is not a record of its own */
		c->samples += !(s->flags & PROF_SAMPLE_SPLIT);
		c->weight += s->weight;
		c->cpu_ns += ns;
		if ((s->flags & CBN_SAMPLE_TRUNCATED) && !(s->flags & PROF_SAMPLE_SPLIT)) {
			c->truncated++;
			c->truncated_py_whole += (s->flags & PROF_SAMPLE_PY_WHOLE) != 0;
		}
		if ((s->flags & CBN_SAMPLE_PC_ONLY) && !(s->flags & PROF_SAMPLE_SPLIT))
			c->pc_only++;
		if (s->thread < p->nthreads) {
			struct cpu_thread *t = &c->threads[s->thread];
			uint32_t pi = p->threads[s->thread].process;

			t->samples += !(s->flags & PROF_SAMPLE_SPLIT);
			t->weight += s->weight;
			t->ns += ns;
			if (pi < p->nprocesses) {
				c->procs[pi].samples += !(s->flags & PROF_SAMPLE_SPLIT);
				c->procs[pi].weight += s->weight;
				c->procs[pi].ns += ns;
			}
		}
		if (s->stack < p->nstacks) {
			stack_w[s->stack] += s->weight;
			stack_ns[s->stack] += ns;
		}
	}
	for (i = 0; i < p->nthreads; i++)
		if (c->threads[i].samples)
			c->nthreads_seen++;
}

/* A function's exact calls, when it has them (Python, --calls). */
static void cpu_counts(struct cpu_func *cf, const struct prof_func *f)
{
	if (!(f->flags & PROF_FUNC_COUNTED))
		return;
	cf->counted = 1;
	cf->calls = f->calls;
	cf->primitive = f->primitive;
}

/* The rows: the functions that were seen, and those counted (--calls: a
 * function called often and quickly is a row, as in cProfile, even with
 * no sample in it).  0, or -ENOMEM. */
static int cpu_keep_funcs(struct cpu_profile *c, const struct profile *p, struct cpu_func *fs)
{
	size_t i, n;

	for (i = 0; i < p->nfuncs; i++)
		cpu_counts(&fs[i], &p->funcs[i]);
	for (i = 0, n = 0; i < p->nfuncs; i++)
		if (fs[i].total_w || fs[i].self_w || fs[i].counted)
			n++;
	c->funcs = calloc(n ? n : 1, sizeof(*c->funcs));
	if (!c->funcs)
		return -ENOMEM;
	for (i = 0; i < p->nfuncs; i++) {
		if (!fs[i].total_w && !fs[i].self_w && !fs[i].counted)
			continue;
		fs[i].func = (uint32_t)i;
		c->funcs[c->nfuncs++] = fs[i];
	}
	return 0;
}

/* The CPU the hottest-lines table can show: code with a line number. */
static void cpu_line_total(struct cpu_profile *c)
{
	size_t i;

	for (i = 0; i < c->nlines; i++)
		if (c->lines[i].line)
			c->line_ns += c->lines[i].self_ns;
}

int cpu_aggregate(const struct profile *p, struct cpu_profile **out)
{
	struct cpu_profile *c;
	uint64_t *stack_w = NULL, *stack_ns = NULL;
	struct cpu_func *fs = NULL;
	uint32_t *stamp = NULL;
	uint64_t *best_in = NULL;
	struct cpu_lmap lm = { 0 };
	size_t i, k;
	int ret = -ENOMEM;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		goto out;
	c->threads = calloc(p->nthreads ? p->nthreads : 1, sizeof(*c->threads));
	c->procs = calloc(p->nprocesses ? p->nprocesses : 1, sizeof(*c->procs));
	stack_w = calloc(p->nstacks ? p->nstacks : 1, sizeof(*stack_w));
	stack_ns = calloc(p->nstacks ? p->nstacks : 1, sizeof(*stack_ns));
	fs = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*fs));
	stamp = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*stamp));
	best_in = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*best_in));
	if (!c->threads || !c->procs || !stack_w || !stack_ns || !fs || !stamp || !best_in)
		goto out;
	for (i = 0; i < p->nfuncs; i++)
		fs[i].inlined_into = PROF_NONE;
	c->nthreads = p->nthreads;
	c->nprocs = p->nprocesses;
	for (i = 0; i < p->nthreads; i++)
		c->threads[i].thread = (uint32_t)i;
	cpu_sum_processes(p, c);

	/* Pass 1: samples → per stack weight and ns (stacks are shared by many
	 * samples, so the frame walk below runs once per distinct stack). */
	cpu_sum_samples(p, c, stack_w, stack_ns);
	if (cpu_measured(p, c) < 0)
		goto out;

	/* Pass 2: stacks → functions and lines.  stamp[f] == stack + 1 means f
	 * was already counted for this stack (recursion counts once). */
	for (i = 0; i < p->nstacks; i++) {
		const struct prof_stack *st = &p->stacks[i];
		const struct prof_frame *leaf;
		uint32_t mark = (uint32_t)i + 1;

		if (!stack_w[i] || !st->nframes || st->first >= p->nframes ||
		    st->nframes > p->nframes - st->first)
			continue;
		leaf = &p->frames[st->first];
		if (leaf->func < p->nfuncs) {
			fs[leaf->func].self_w += stack_w[i];
			fs[leaf->func].self_ns += stack_ns[i];
		}
		/* code without a symbol keeps each pc (its "file") as a line */
		if ((leaf->line || (leaf->func < p->nfuncs &&
				    (p->funcs[leaf->func].flags & PROF_FUNC_NOSYM))) &&
		    leaf->file && *leaf->file && leaf->func < p->nfuncs &&
		    cpu_lmap_add(&lm, leaf->file, leaf->line, leaf->func, stack_w[i],
				 stack_ns[i]) < 0)
			goto out;
		for (k = 0; k < st->nframes; k++) {
			const struct prof_frame *fr = &p->frames[st->first + k];
			uint32_t f = fr->func;

			/* the function an inlined frame was inlined into: the next
			 * frame out that was not itself inlined */
			if (fr->inlined && f < p->nfuncs && stack_w[i] > best_in[f]) {
				uint32_t o = k + 1;

				while (o < st->nframes && p->frames[st->first + o].inlined)
					o++;
				if (o < st->nframes) {
					best_in[f] = stack_w[i];
					fs[f].inlined_into = p->frames[st->first + o].func;
				}
			}
			if (f >= p->nfuncs || stamp[f] == mark)
				continue;
			stamp[f] = mark;
			fs[f].total_w += stack_w[i];
			fs[f].total_ns += stack_ns[i];
		}
	}

	if (cpu_keep_funcs(c, p, fs) < 0)
		goto out;
	c->lines = lm.v;
	c->nlines = lm.n;
	cpu_line_total(c);
	lm.v = NULL;
	if (c->nlines)  /* qsort's base must not be NULL, even for 0 elements */
		qsort(c->lines, c->nlines, sizeof(*c->lines), cpu_line_cmp);
	cpu_sort(c, p, CPU_SORT_TOTTIME);
	if (cpu_python(p, &c->python) < 0 || cpu_unwind(p, &c->unwind) < 0)
		goto out;
	*out = c;
	c = NULL;
	ret = 0;
out:
	cpu_free(c);
	free(stack_w);
	free(stack_ns);
	free(fs);
	free(stamp);
	free(best_in);
	free(lm.v);
	util_map_free(&lm.index);
	return ret;
}

void cpu_free(struct cpu_profile *c)
{
	if (!c)
		return;
	free(c->funcs);
	free(c->lines);
	free(c->threads);
	free(c->procs);
	free(c->unwind.stops);
	free(c);
}

/* --- sorting ---------------------------------------------------------------- */

static const struct {
	const char *key;
	int sort;
} cpu_keys[] = {
	{ "tottime", CPU_SORT_TOTTIME },   { "time", CPU_SORT_TOTTIME },
	{ "cumtime", CPU_SORT_CUMTIME },   { "cumulative", CPU_SORT_CUMTIME },
	{ "ncalls", CPU_SORT_NCALLS },     { "calls", CPU_SORT_NCALLS },
	{ "pcalls", CPU_SORT_NCALLS },     { "name", CPU_SORT_NAME },
	{ "filename", CPU_SORT_FILENAME }, { "file", CPU_SORT_FILENAME },
	{ "module", CPU_SORT_FILENAME },   { "line", CPU_SORT_LINE },
	{ "nfl", CPU_SORT_NFL },           { "stdname", CPU_SORT_STDNAME },
};

size_t cpu_counted_rows(const struct cpu_profile *c)
{
	size_t i, n = 0;

	for (i = 0; i < c->nfuncs; i++)
		n += c->funcs[i].counted && c->funcs[i].calls;
	return n;
}

int cpu_sort_parse(const char *key)
{
	size_t i;

	if (!key)
		return -1;
	for (i = 0; i < sizeof(cpu_keys) / sizeof(cpu_keys[0]); i++)
		if (strcmp(key, cpu_keys[i].key) == 0)
			return cpu_keys[i].sort;
	return -1;
}

const char *cpu_sort_desc(int key)
{
	switch (key) {
	case CPU_SORT_CUMTIME:
		return "cumulative time (cumtime)";
	case CPU_SORT_NCALLS:
		return "sample count (ncalls)";
	case CPU_SORT_NAME:
		return "function name";
	case CPU_SORT_FILENAME:
		return "file name";
	case CPU_SORT_LINE:
		return "line number";
	case CPU_SORT_NFL:
		return "name/file/line";
	case CPU_SORT_STDNAME:
		return "standard name";
	default:
		return "internal time (tottime)";
	}
}

static int cpu_strcmp0(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int cpu_u32cmp(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b;
}

/* descending */
static int cpu_u64cmp_desc(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b;
}

/* pstats' stdname: "file:line(name)" compared as one string. */
static int cpu_stdname_cmp(const struct prof_func *x, const struct prof_func *y)
{
	int c = cpu_strcmp0(x->file, y->file);

	if (c)
		return c;
	if (x->line != y->line) {
		/* compare the decimal forms, as pstats compares the strings */
		char a[16], b[16];

		snprintf(a, sizeof(a), "%u", x->line);
		snprintf(b, sizeof(b), "%u", y->line);
		c = strcmp(a, b);
		if (c)
			return c;
	}
	return cpu_strcmp0(x->name, y->name);
}

static int cpu_func_cmp(const void *a, const void *b, void *arg)
{
	const struct cpu_func *x = a, *y = b;
	const struct profile *p = ((const void **)arg)[0];
	int key = *(const int *)((const void **)arg)[1];
	const struct prof_func *fx = &p->funcs[x->func], *fy = &p->funcs[y->func];
	int c = 0;

	switch (key) {
	case CPU_SORT_CUMTIME:
		c = cpu_u64cmp_desc(x->total_ns, y->total_ns);
		if (!c)
			c = cpu_u64cmp_desc(x->total_w, y->total_w);
		break;
	case CPU_SORT_NCALLS:
		c = y->counted - x->counted;
		if (!c)
			c = x->counted ? cpu_u64cmp_desc(x->calls, y->calls)
				       : cpu_u64cmp_desc(x->total_w, y->total_w);
		break;
	case CPU_SORT_NAME:
		c = cpu_strcmp0(fx->name, fy->name);
		break;
	case CPU_SORT_FILENAME:
		c = cpu_strcmp0(fx->file, fy->file);
		if (!c)
			c = cpu_strcmp0(fx->module, fy->module);
		break;
	case CPU_SORT_LINE:
		c = cpu_u32cmp(fx->line, fy->line);
		break;
	case CPU_SORT_NFL:
		c = cpu_strcmp0(fx->name, fy->name);
		if (!c)
			c = cpu_strcmp0(fx->file, fy->file);
		if (!c)
			c = cpu_u32cmp(fx->line, fy->line);
		break;
	case CPU_SORT_STDNAME:
		c = cpu_stdname_cmp(fx, fy);
		break;
	default:
		break;
	}
	if (!c)
		c = cpu_u64cmp_desc(x->self_ns, y->self_ns);
	if (!c)
		c = cpu_u64cmp_desc(x->self_w, y->self_w);
	if (!c)
		c = cpu_u64cmp_desc(x->total_ns, y->total_ns);
	if (!c)
		c = cpu_strcmp0(fx->name, fy->name);
	if (!c)
		c = cpu_strcmp0(fx->file, fy->file);
	if (!c)
		c = cpu_u32cmp(x->func, y->func);
	return c;
}

void cpu_sort(struct cpu_profile *c, const struct profile *p, int key)
{
	const void *arg[2] = { p, &key };

	qsort_r(c->funcs, c->nfuncs, sizeof(*c->funcs), cpu_func_cmp, arg);
}

/* --- data quality ----------------------------------------------------------- */

const char *cpu_lost_name(unsigned reason)
{
	switch (reason) {
	case CBN_LOST_REENTRANT:
		return "reentrant";
	case CBN_LOST_BUFFER_FULL:
		return "buffer_full";
	case CBN_LOST_NO_THREAD:
		return "no_thread";
	case CBN_LOST_FOREIGN_PID:
		return "foreign_pid";
	case CBN_LOST_DISABLED:
		return "disabled";
	case CBN_LOST_SANDBOXED:
		return "sandboxed";
	case CBN_LOST_SIGQUEUE:
		return "sigqueue";
	default:
		return NULL;
	}
}

const char *cpu_pc_only_name(unsigned reason)
{
	switch (reason) {
	case CBN_PCONLY_NO_UNWINDER:
		return "no_unwinder";
	case CBN_PCONLY_HELD:
		return "unwinding_paused";
	case CBN_PCONLY_LOW_STACK:
		return "low_stack";
	case CBN_PCONLY_NO_TRACE:
		return "no_unwind_info";
	default:
		return NULL;
	}
}

const char *cpu_unsampled_name(unsigned reason)
{
	switch (reason) {
	case CBN_UNSAMPLED_NO_STACK:
		return "no_handler_stack";
	case CBN_UNSAMPLED_NO_TIMER:
		return "no_timer";
	default:
		return NULL;
	}
}

const char *cpu_sampler_mode(const struct cpu_profile *c)
{
	if (c->sampler.threads_perf && c->sampler.threads_timer)
		return "perf events and POSIX CPU timers";
	if (c->sampler.threads_perf)
		return "perf events";
	if (c->sampler.threads_timer)
		return "POSIX CPU timers";
	return "";
}



/*
 * The optimization level a GCC producer string records (the last -O flag;
 * GCC's default when there is none is -O0): 0..3, 's'/'g'/'z' as 10, or -1
 * when the string records no flags (clang without -grecord-command-line).
 */
int cpu_producer_opt(const char *prod)
{
	const char *p, *last = NULL;

	if (!prod || strncmp(prod, "GNU ", 4) != 0 || !strstr(prod, " -"))
		return -1;
	for (p = strstr(prod, " -O"); p; p = strstr(p + 3, " -O"))
		last = p + 3;
	if (!last)
		return 0;
	if (*last >= '0' && *last <= '9')
		return *last - '0';
	return *last == ' ' || *last == '\0' ? 1 : 10;
}

void cpu_producer_name(const char *prod, char *buf, size_t size)
{
	const char *flags = strstr(prod, " -");
	size_t n = flags ? (size_t)(flags - prod) : strlen(prod);

	if (!size)
		return;
	while (n && prod[n - 1] == ' ')
		n--;
	if (n >= size)
		n = size - 1;
	memcpy(buf, prod, n);
	buf[n] = '\0';
}

struct cpu_wlist {
	char **v;
	size_t n, cap;
	int failed;
};

static void cpu_build_warnings(const struct profile *p, const struct cpu_profile *c,
			       struct cpu_wlist *l);

__attribute__((format(printf, 2, 3))) static void cpu_wadd(struct cpu_wlist *l, const char *fmt,
							   ...)
{
	va_list ap;
	char *s;

	if (l->failed)
		return;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		char **v = util_reallocarray(l->v, cap, sizeof(*v));

		if (!v) {
			l->failed = 1;
			return;
		}
		l->v = v;
		l->cap = cap;
	}
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		l->failed = 1;
	else
		l->v[l->n++] = s;
	va_end(ap);
}

/* What the program's build says about its profile: no optimization in the
 * program itself, or in a library that holds much of the CPU. */
static void cpu_build_warnings(const struct profile *p, const struct cpu_profile *c,
			       struct cpu_wlist *l)
{
	size_t i, k;

	if (p->env.producer && cpu_producer_opt(p->env.producer) == 0)
		cpu_wadd(l, "the program was built without optimization (-O0): its profile is not "
			 "that of the build you ship; rebuild with -O2 (keep -g)");
	for (i = 0; i < p->nhitmods && c->cpu_ns; i++) {
		const struct prof_hitmod *m = &p->hitmods[i];
		uint64_t self = 0;

		if (!m->producer || cpu_producer_opt(m->producer) != 0 ||
		    (p->processes && p->processes[0].exe && !strcmp(m->path, p->processes[0].exe)))
			continue;
		for (k = 0; k < c->nfuncs; k++)
			if (!strcmp(p->funcs[c->funcs[k].func].module, m->file))
				self += c->funcs[k].self_ns;
		if (self * 10 >= c->cpu_ns)
			cpu_wadd(l, "%s holds %.0f%% of the CPU and was built without optimization "
				 "(-O0): a debug build of a hot library; use its optimized build",
				 m->file, 100.0 * (double)self / (double)c->cpu_ns);
	}
}

/* Samples cut at the depth cap; those whose Python chain was read to its
 * end keep every Python caller (PROF_SAMPLE_PY_WHOLE). */
static void cpu_truncated_warning(const struct profile *p, const struct cpu_profile *c,
				  struct cpu_wlist *l)
{
	if (c->truncated && c->truncated_py_whole == c->truncated)
		cpu_wadd(l, "%llu of %llu samples were cut at the maximum stack depth with all their "
			 "Python frames read: the Python functions' cumtime is right; native "
			 "frames at the root end are missing (the interpreter's start-up, C between "
			 "the outermost Python calls), so their cumtime is low",
			 (unsigned long long)c->truncated, (unsigned long long)c->samples);
	else if (c->truncated)
		cpu_wadd(l, "%llu of %llu samples were cut at the maximum stack depth%s: their "
			 "outermost callers are missing, so cumtime of those callers is low%s%.0llu%s",
			 (unsigned long long)c->truncated, (unsigned long long)c->samples,
			 p->attached_pid ? " or, attached, at the end of the stack copied at each sample" : "",
			 c->truncated_py_whole ? " (" : "",
			 (unsigned long long)c->truncated_py_whole,
			 c->truncated_py_whole ? " of them with all their Python frames read, whose "
						 "Python functions' cumtime is right)" : "");
}

/*
 * Threads that ran at least 4 periods and 20 ms of CPU (their THREAD_END says
 * so: a POSIX timer, checked at the tick, may leave a thread of a few ms
 * unsampled by design) and have no sample at all, in a process that recorded the whole run (no capture
 * windows, no ring): a new thread's POSIX CPU timer that never fired, which a
 * loaded Linux 6.18 does (docs/agent.md, Known limits).  Named, with the CPU
 * the tables miss.
 */
#define CPU_UNSAMPLED_MIN_NS 20000000ull

static void cpu_unsampled_threads(const struct profile *p, struct cpu_wlist *l)
{
	char names[160];
	size_t i, n = 0, off = 0;
	uint64_t miss = 0;

	names[0] = '\0';
	for (i = 0; i < p->nthreads; i++) {
		const struct prof_thread *t = &p->threads[i];
		const struct prof_process *pr;
		int w;

		/* a thread whose samples all fell in the profiler's code (a
		 * loop of annotation marks) was sampled */
		if (t->weight || t->overhead_weight || t->process >= p->nprocesses)
			continue;
		pr = &p->processes[t->process];
		if (pr->capture.mode != CBN_CAPTURE_ALL || pr->ring_ns ||
		    t->cpu_ns < 4 * prof_period_of_process(p, t->process) ||
		    t->cpu_ns < CPU_UNSAMPLED_MIN_NS)
			continue;
		n++;
		miss += t->cpu_ns;
		if (off < sizeof(names) - 1) {
			w = snprintf(names + off, sizeof(names) - off, "%s%s (tid %u, %.1f ms)",
				     off ? ", " : "", t->name && *t->name ? t->name : "thread",
				     t->tid, (double)t->cpu_ns / 1e6);
			off = w < 0 ? sizeof(names) - 1 : off + (size_t)w;
		}
	}
	if (n)
		cpu_wadd(l, "%zu thread%s ran without a single sample: %s%s; %.1f ms of CPU are "
			 "missing from the tables (most likely a new thread's CPU timer that never "
			 "fired, which a loaded Linux 6.18 does: docs/agent.md, Known limits)", n,
			 n == 1 ? "" : "s", names, off >= sizeof(names) - 1 ? "..." : "",
			 (double)miss / 1e6);
}

/* The program's file name: the last part of its path. */
static const char *cpu_exe_base(const struct prof_process *pr)
{
	const char *e = pr->exe && *pr->exe ? pr->exe : "?", *s = strrchr(e, '/');

	return s && s[1] ? s + 1 : e;
}

/*
 * The processes' starts before the agent could sample them: the dynamic
 * loader mapping and relocating their libraries (a C++ program with many,
 * cmake -E, spends 15-25 ms so; a build starts hundreds), in no table and
 * out of the Measured column.  Said when it adds up to 2 % of the sampled
 * CPU, with the program that spent the most so.
 */
#define CPU_BEFORE_AGENT_MIN_NS 10000000ull

static void cpu_before_agent(const struct profile *p, const struct cpu_profile *c,
			     struct cpu_wlist *l)
{
	const char *top = NULL, *seen[64];
	uint64_t top_ns = 0;
	uint32_t top_n = 0;
	char all[32], most[32];
	size_t i, j, nseen = 0;

	if (!c->cpu_ns || p->before_agent_ns < CPU_BEFORE_AGENT_MIN_NS ||
	    p->before_agent_ns * 50 < c->cpu_ns)
		return;
	for (i = 0; i < p->nprocesses; i++) {
		const char *name = cpu_exe_base(&p->processes[i]);
		uint64_t ns = 0;
		uint32_t n = 0;

		if (!p->processes[i].before_agent_ns)
			continue;
		/* each program summed once (past 64 of them, a few again) */
		for (j = 0; j < nseen && strcmp(seen[j], name); j++)
			;
		if (j < nseen)
			continue;
		if (nseen < sizeof(seen) / sizeof(seen[0]))
			seen[nseen++] = name;
		for (j = i; j < p->nprocesses; j++)
			if (p->processes[j].before_agent_ns &&
			    !strcmp(cpu_exe_base(&p->processes[j]), name)) {
				ns += p->processes[j].before_agent_ns;
				n++;
			}
		if (ns > top_ns) {
			top = name;
			top_ns = ns;
			top_n = n;
		}
	}
	cpu_wadd(l, "%s of CPU went to starting %u process%s before the profiler could sample "
		 "them, %.1f%% as much as the sampled CPU: the dynamic loader mapping and "
		 "relocating their libraries (the profiler's own among them), in no table; "
		 "most in %s, %s in %u process%s",
		 util_fmt_time(all, sizeof(all), (double)p->before_agent_ns), p->before_agent_procs,
		 p->before_agent_procs == 1 ? "" : "es",
		 100.0 * (double)p->before_agent_ns / (double)c->cpu_ns, top ? top : "?",
		 util_fmt_time(most, sizeof(most), (double)top_ns), top_n, top_n == 1 ? "" : "es");
}

int cpu_warnings(const struct profile *p, const struct cpu_profile *c, char ***out, size_t *n)
{
	struct cpu_wlist l = { 0 };
	size_t i;

	*out = NULL;
	*n = 0;
	for (i = 0; i < p->nwarnings; i++)
		if (p->warnings[i] && *p->warnings[i])
			cpu_wadd(&l, "%s", p->warnings[i]);
	for (i = 0; i < p->nprocesses; i++) {
		const struct prof_process *pr = &p->processes[i];

		if (pr->disabled && *pr->disabled)
			cpu_wadd(&l, "the agent disabled itself in pid %u (%s): %s; that process's "
				 "profile stops there", pr->pid, pr->exe ? pr->exe : "?",
				 pr->disabled);
	}
	if (p->nnodebug_modules) {
		char *dbg = NULL;

		if (cpu_debuginfo_line(p, c, &dbg) < 0)
			l.failed = 1;
		else if (dbg)
			cpu_wadd(&l, "%s", dbg);
		free(dbg);
	}
	cpu_build_warnings(p, c, &l);
	if (c->samples < CPU_FEW_SAMPLES)
		cpu_wadd(&l, "too few samples to trust (%llu); raise -F or run longer",
			 (unsigned long long)c->samples);
	{
		char pw[512];
		int k = 0;

		while ((k = cpu_python_warning(&c->python, k, pw, sizeof(pw))) > 0)
			cpu_wadd(&l, "%s", pw);
	}
	{
		char uw[1024];
		int k = 0;

		while ((k = cpu_unwind_warning(c, k, uw, sizeof(uw))) > 0)
			cpu_wadd(&l, "%s", uw);
	}
	cpu_truncated_warning(p, c, &l);
	/* a sample or two of a thousand with only their pc changes no
	 * caller's cumtime that matters (the JSON keeps the count) */
	if (c->pc_only && c->pc_only * 100 >= c->samples) {
		char why[256];
		size_t off = 0;
		unsigned k;

		why[0] = 0;
		for (k = 0; k < CBN_PCONLY_NREASONS; k++) {
			const char *name = cpu_pc_only_name(k);
			int w;

			if (!name || !c->sampler.pc_only_why[k])
				continue;
			w = snprintf(why + off, sizeof(why) - off, "%s%llu %s", off ? ", " : " (",
				     (unsigned long long)c->sampler.pc_only_why[k], name);
			if (w < 0 || (size_t)w >= sizeof(why) - off)
				break;
			off += (size_t)w;
		}
		cpu_wadd(&l, "%llu of %llu samples hold only the interrupted pc%s%s: they count in "
			 "tottime but not in their callers' cumtime",
			 (unsigned long long)c->pc_only, (unsigned long long)c->samples, why,
			 off ? ")" : "");
	}
	{
		uint64_t un = 0;
		unsigned k;

		for (k = 0; k < CBN_UNSAMPLED_NREASONS; k++)
			un += c->sampler.unsampled_why[k];
		if (un)
			cpu_wadd(&l, "%llu threads could not be sampled (%llu without memory for the "
				 "handler's stack, %llu without a timer): their CPU is missing from "
				 "the tables", (unsigned long long)un,
				 (unsigned long long)c->sampler.unsampled_why[CBN_UNSAMPLED_NO_STACK],
				 (unsigned long long)c->sampler.unsampled_why[CBN_UNSAMPLED_NO_TIMER]);
	}
	cpu_unsampled_threads(p, &l);
	cpu_before_agent(p, c, &l);
	if (c->sampler.notes & CBN_NOTE_SIG_HANDLER)
		cpu_wadd(&l, "the program installed a handler for the sampling signal %d; sampling "
			 "moved to signal %d, and what the program's handler receives is its own "
			 "(docs/agent.md)", c->sampler.signo_first, c->sampler.signo);
	if (c->sampler.notes & (CBN_NOTE_SIG_BLOCKED | CBN_NOTE_SIG_WAITED))
		cpu_wadd(&l, "the program %s the sampling signal %d: it stayed open for sampling and "
			 "the program saw it as it set it; if it relies on that signal, choose "
			 "another with --signal (docs/agent.md)",
			 (c->sampler.notes & CBN_NOTE_SIG_WAITED) ? "waited for" : "blocked",
			 c->sampler.signo);
	if (c->lost_total && c->lost_total * 100 >= c->weight + c->lost_total) {
		cpu_wadd(&l, "%llu samples were lost (%.1f%% of all): times are low by about "
			 "that much; see the Lost line above for the reasons",
			 (unsigned long long)c->lost_total,
			 100.0 * (double)c->lost_total / (double)(c->weight + c->lost_total));
	}
	if (l.failed) {
		cpu_warnings_free(l.v, l.n);
		return -ENOMEM;
	}
	*out = l.v;
	*n = l.n;
	return 0;
}

void cpu_warnings_free(char **w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(w[i]);
	free(w);
}
