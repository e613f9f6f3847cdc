/*
 * text.c — the text report on stdout: run header, cProfile-style CPU table,
 * hottest source lines, per-process and per-thread tables, the steps view
 * (steps_text.c), the memory view (mem_text.c), the CUDA tables (cuda_text.c),
 * and the data-quality footer.
 * Also owns the --sort keys.
 * Formats the analysis result only; sorts copies, never the result itself.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "cpu.h"
#include "cuda_analysis.h"
#include "cuda_report.h"
#include "dist_report.h"
#include "fmt.h"
#include "mem_report.h"
#include "steps_report.h"
#include "memory.h"
#include "names.h"
#include "ops_report.h"
#include "programs_report.h"
#include "report.h"
#include "util.h"
#include "wait.h"
#include "wait_report.h"

#define TEXT_DEFAULT_LIMIT 15
#define TEXT_NAME_MAX 80       /* columns of a function name in the CPU table */
#define TEXT_PATH_MAX 60       /* columns of a path before it is cut from the left */

/* --sort takes exactly the pstats keys of the CPU table and the key_averages
 * keys of the CUDA tables, torch's device_* spellings included, and the keys
 * of the memory allocation-sites table: each table's own parser decides, so
 * the lists live in one place each (analysis/cpu.c, analysis/cuda_tables.c,
 * analysis/memory.c).  Each table falls back to its own default for a key of the
 * other kind.  The parsers reject NULL. */
int report_sort_key_valid(const char *key)
{
	return cpu_sort_parse(key) >= 0 || cuda_sort_key_valid(key) || mem_sort_key_valid(key);
}

static const char *text_plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* Paths under the current directory are shown relative to it. */
static const char *text_short_path(const char *path, const char *cwd, size_t cwdlen)
{
	if (!path)
		return "";
	if (cwdlen > 1 && strncmp(path, cwd, cwdlen) == 0 && path[cwdlen] == '/')
		return path + cwdlen + 1;
	return path;
}

struct text_ctx {
	FILE *out;
	const struct analysis *a;
	const struct profile *p;
	const struct report_opts *o;
	const struct cpu_profile *c;
	int limit;               /* < 0: no limit */
	char cwd[4096];
	size_t cwdlen;
};

static const char *text_path(struct text_ctx *t, const char *path)
{
	return text_short_path(path, t->cwd, t->cwdlen);
}

static void text_exit_desc(char *buf, size_t len, int status, int signo)
{
	if (signo > 0) {
		const char *abbr = sigabbrev_np(signo);

		if (abbr)
			snprintf(buf, len, "killed by signal %d (SIG%s)", signo, abbr);
		else
			snprintf(buf, len, "killed by signal %d", signo);
	} else {
		snprintf(buf, len, "%d", status);
	}
}

static void text_command(FILE *out, const struct profile *p)
{
	size_t i;

	if (p->argv && p->argv[0]) {
		for (i = 0; p->argv[i]; i++)
			fprintf(out, "%s%s", i ? " " : "", p->argv[i]);
	} else if (p->nprocesses && p->processes[0].cmdline) {
		fputs(p->processes[0].cmdline, out);
	} else {
		fputs("?", out);
	}
}

/* 1 if process image idx was replaced by exec: a later image has its pid. */
static int text_execd(const struct profile *p, size_t idx)
{
	size_t i;

	for (i = 0; i < p->nprocesses; i++)
		if (i != idx && p->processes[i].pid == p->processes[idx].pid &&
		    p->processes[i].exec_seq > p->processes[idx].exec_seq)
			return 1;
	return 0;
}

/* Processes as the user counts them: an exec keeps the pid. */
static size_t text_distinct_pids(const struct profile *p)
{
	size_t i, k, n = 0;

	for (i = 0; i < p->nprocesses; i++) {
		for (k = 0; k < i; k++)
			if (p->processes[k].pid == p->processes[i].pid)
				break;
		if (k == i)
			n++;
	}
	return n;
}

/* Threads as the user counts them (an exec keeps the main thread's tid);
 * counting stops at 2, which is all the caller needs. */
static size_t text_distinct_tids(const struct profile *p)
{
	size_t i, k, n = 0;

	for (i = 0; i < p->nthreads && n < 2; i++) {
		for (k = 0; k < i; k++)
			if (p->threads[k].tid == p->threads[i].tid)
				break;
		if (k == i)
			n++;
	}
	return n;
}

/* How the kernel's time is shown: named kernel stacks, or why not. */
/* --ring: what the ring kept, and what it let go. */
static void text_ring(FILE *out, const struct profile *p)
{
	uint64_t ring = 0, recycled = 0, dropped = 0;
	size_t i;
	char b[32];

	for (i = 0; i < p->nprocesses; i++) {
		if (p->processes[i].ring_ns > ring)
			ring = p->processes[i].ring_ns;
		recycled += p->processes[i].ring_recycled;
		dropped += p->processes[i].ring_dropped;
	}
	if (!ring)
		return;
	fprintf(out, "  Ring:       the last %s of each process kept; %llu older chunks reused, "
		"%llu older samples left out\n", fmt_time(b, sizeof(b), ring),
		(unsigned long long)recycled, (unsigned long long)dropped);
}

static void text_kernel_stacks(FILE *out, const struct cpu_sampler *sm)
{
	if (sm->kstack_state == CBN_KSTACK_TAKEN) {
		fprintf(out, "  Kernel:     stacks named ([kernel] frames): %llu kernel samples on %llu "
			"thread%s", (unsigned long long)sm->kstack_samples,
			(unsigned long long)sm->kstack_threads, sm->kstack_threads == 1 ? "" : "s");
		if (sm->kstack_placed || sm->kstack_unplaced)
			fprintf(out, ", %llu on the calling stack, %llu on the next sample's",
				(unsigned long long)sm->kstack_placed,
				(unsigned long long)sm->kstack_unplaced);
		if (sm->kstack_lost)
			fprintf(out, ", %llu without a stack", (unsigned long long)sm->kstack_lost);
		if (sm->kstack_parks)
			fprintf(out, "; the kernel event paused %llu time%s on threads staying in user "
				"mode, resumed %llu", (unsigned long long)sm->kstack_parks,
				sm->kstack_parks == 1 ? "" : "s", (unsigned long long)sm->kstack_unparks);
		fputc('\n', out);
	} else if (sm->kstack_state == CBN_KSTACK_OFF) {
		fprintf(out, "  Kernel:     one [kernel] row, no kernel stacks (%s)\n",
			sm->kstack_reason ? sm->kstack_reason : "not available");
	}
}

/* The profiler's own CPU on one line, kept out of every table. */
static void text_overhead(FILE *out, const struct cpu_profile *c)
{
	const struct cpu_overhead *o = &c->overhead;
	const struct {
		uint64_t ns;
		const char *what;
	} part[] = {
		{ o->sampled_ns, "in its hooks and callbacks on the program's threads" },
		{ o->threads_ns, "in the CUDA layer's thread" },
		{ o->handler_ns, "in the sampling handler" },
		{ o->startup_ns, "starting up" },
		{ o->launcher_ns, "in the launcher, outside the program" },
	};
	char a[32];
	size_t i;
	int first = 1;

	if (!o->total_ns)
		return;
	fprintf(out, "  Profiler overhead: %s", fmt_time(a, sizeof(a), o->total_ns));
	if (c->cpu_ns)
		fprintf(out, " (%.1f%% of the program's CPU", 100.0 * (double)o->total_ns /
			(double)c->cpu_ns);
	else
		fprintf(out, " (");
	for (i = 0; i < sizeof(part) / sizeof(part[0]); i++) {
		if (!part[i].ns)
			continue;
		fprintf(out, "%s%s %s", first ? (c->cpu_ns ? ": " : "") : ", ",
			fmt_time(a, sizeof(a), part[i].ns), part[i].what);
		first = 0;
	}
	fprintf(out, "; in no table)\n");
}

/* "3.12.1", "3.13.0rc2" from PY_VERSION_HEX. */
static const char *text_py_version(char *buf, size_t len, uint32_t v)
{
	static const char *const level[16] = {[0xa] = "a", [0xb] = "b", [0xc] = "rc"};
	unsigned lv = (v >> 4) & 0xf;

	if (lv != 0xf && level[lv])
		snprintf(buf, len, "%u.%u.%u%s%u", v >> 24, (v >> 16) & 0xff, (v >> 8) & 0xff,
			 level[lv], v & 0xf);
	else
		snprintf(buf, len, "%u.%u.%u", v >> 24, (v >> 16) & 0xff, (v >> 8) & 0xff);
	return buf;
}

/* Which interpreter was read, or why not (docs/agent.md section 17). */
static void text_python(FILE *out, const struct cpu_python *py)
{
	uint64_t unread = 0;
	char v[32];
	unsigned k;

	for (k = 0; k < CBN_PYU_NREASONS; k++)
		unread += py->unread[k];
	if (py->state == CBN_PY_ON) {
		fprintf(out, "  Python:     CPython %s%s: Python frames in %.1f%% of its samples",
			text_py_version(v, sizeof(v), py->version), py->mixed ? " (and others)" : "",
			py->samples_of ? 100.0 * (double)py->samples / (double)py->samples_of : 0.0);
		if (py->truncated)
			fprintf(out, ", %llu stacks with their Python frames cut at the depth cap",
				(unsigned long long)py->truncated);
		if (unread)
			fprintf(out, ", %llu stacks kept native (their frames could not be read)",
				(unsigned long long)unread);
		fputc('\n', out);
	} else if (py->state == CBN_PY_OFF) {
		fprintf(out, "  Python:     CPython %s, frames not read (--python off)\n",
			text_py_version(v, sizeof(v), py->version));
	} else if (py->state == CBN_PY_REFUSED) {
		fprintf(out, "  Python:     frames not read: %s\n", py->reason ? py->reason : "?");
	}
}

static void text_header(struct text_ctx *t)
{
	const struct profile *p = t->p;
	const struct cpu_profile *c = t->c;
	FILE *out = t->out;
	char a[64], b[64];
	unsigned k;
	int first = 1;
	size_t npids;

	fprintf(out, "cbottleneck: CPU sampling profile\n");
	/* the answer first (verdict.c); the views below give its evidence */
	if (t->a->verdict.text) {
		/* paths under the current directory relative to it, as in the
		 * tables (the analysis and the JSON keep them whole) */
		const char *v = t->a->verdict.text, *hit;

		fprintf(out, "  Verdict:    ");
		while (t->cwdlen > 1 && (hit = strstr(v, t->cwd)) && hit[t->cwdlen] == '/') {
			fwrite(v, 1, (size_t)(hit - v), out);
			v = hit + t->cwdlen + 1;
		}
		fprintf(out, "%s\n", v);
	}
	fprintf(out, "  Command:    ");
	text_command(out, p);
	fputc('\n', out);
	text_exit_desc(a, sizeof(a), p->exit_status, p->exit_signal);
	fprintf(out, "  Exit:       %s\n", a);
	fprintf(out, "  Wall time:  %s\n", fmt_time(a, sizeof(a), p->wall_ns));
	report_steps_captured(out, p, "  Captured:   ");
	/* what every figure below covers (span.h) */
	if (t->a->wait && t->a->wait->windowed)
		fprintf(out, "  Span:       every figure below covers the capture windows (%s), "
			"not the whole run\n", fmt_time(a, sizeof(a), t->a->wait->span_ns));
	if (p->rank_filter)
		fprintf(out, "  Ranks:      %s (--ranks): every figure below covers these ranks' "
			"processes only\n", p->rank_filter);
	fprintf(out, "  CPU time:   %s", fmt_time(a, sizeof(a), c->cpu_ns));
	if (t->a->wait && t->a->wait->windowed && t->a->wait->span_ns)
		fprintf(out, " (%.2f%% of the captured time, sampled",
			100.0 * (double)c->cpu_ns / (double)t->a->wait->span_ns);
	else if (p->wall_ns)
		fprintf(out, " (%.2f%% of wall, sampled", 100.0 * (double)c->cpu_ns / (double)p->wall_ns);
	else
		fprintf(out, " (sampled");
	/* the kernel's count, when every thread reported one at its end */
	if (c->measured_ns)
		fprintf(out, "; %s measured", fmt_time(b, sizeof(b), c->measured_ns));
	fprintf(out, ")\n");
	text_overhead(out, c);
	/* the overview's own figure (wait.h of_cpu), so the two cannot differ */
	if (t->a->wait && t->a->wait->cpu_ns)
		fprintf(out, "  User/kernel: %.1f%% user, %.1f%% kernel (of the sampled CPU)\n",
			100.0 * (1.0 - t->a->wait->of_cpu[WAIT_ACT_KERNEL]),
			100.0 * t->a->wait->of_cpu[WAIT_ACT_KERNEL]);
	/* the period the agent actually used is the truth; the frequency asked
	 * for may have been rounded to a whole timer period */
	if (p->period_ns)
		fprintf(out, "  Sampling:   %s (period %s)\n",
			fmt_hz(a, sizeof(a), 1e9 / (double)p->period_ns),
			fmt_time(b, sizeof(b), p->period_ns));
	else if (p->frequency_hz > 0)
		fprintf(out, "  Sampling:   %s\n", fmt_hz(a, sizeof(a), p->frequency_hz));
	if (*cpu_sampler_mode(c)) {
		fprintf(out, "  Sampler:    %s", cpu_sampler_mode(c));
		if (c->sampler.signo)
			fprintf(out, ", signal %s", fmt_signal(b, sizeof(b), (int)c->sampler.signo));
		if (c->sampler.threads_timer && c->sampler.timer_reason)
			fprintf(out, " (timers: %s)", c->sampler.timer_reason);
		fputc('\n', out);
	}
	text_kernel_stacks(out, &c->sampler);
	text_python(out, &c->python);
	fprintf(out, "  Samples:    %llu", (unsigned long long)c->samples);
	if (c->weight != c->samples && (c->sampler.threads_perf || c->sampler.threads_timer))
		fprintf(out, " (weight %llu: the periods of CPU they stand for)",
			(unsigned long long)c->weight);
	else if (c->weight != c->samples)
		fprintf(out, " (weight %llu: the timer overran %llu times)",
			(unsigned long long)c->weight,
			(unsigned long long)(c->weight > c->samples ? c->weight - c->samples : 0));
	fputc('\n', out);
	text_ring(out, p);
	report_wait_header(out, p, "  Off-CPU:    ");
	fprintf(out, "  Lost:       ");
	if (!c->lost_total) {
		fprintf(out, "0 lost\n");
	} else {
		fprintf(out, "%llu lost (", (unsigned long long)c->lost_total);
		for (k = 0; k < CBN_LOST_NREASONS; k++) {
			const char *name = cpu_lost_name(k);

			if (!c->lost[k])
				continue;
			fprintf(out, "%s%llu %s", first ? "" : ", ", (unsigned long long)c->lost[k],
				name ? name : "other");
			first = 0;
		}
		fprintf(out, ")\n");
	}
	npids = text_distinct_pids(p);
	fprintf(out, "  Processes:  %zu", npids);
	if (npids != p->nprocesses)
		fprintf(out, " (%zu program images: exec replaced %zu)", p->nprocesses,
			p->nprocesses - npids);
	fputc('\n', out);
	fprintf(out, "  Threads:    %zu", p->nthreads);
	if (c->nthreads_seen != p->nthreads)
		fprintf(out, " (%zu with samples)", c->nthreads_seen);
	fprintf(out, "\n\n");
}

/* A row's function: name, then [no symbol] for code grouped by the unwind
 * tables, or [inlined in CONTAINER] for a function the compiler inlined
 * (into: its containing function, PROF_NONE when it was never inlined). */
static void text_func_name(struct text_ctx *t, char *buf, size_t len, const struct prof_func *f,
			   uint32_t into)
{
	char name[TEXT_NAME_MAX * 8 + 32], path[TEXT_PATH_MAX * 4 + 8], cont[TEXT_NAME_MAX * 4 + 8];

	char bare[TEXT_NAME_MAX * 8 + 32];

	/* rows show C++ functions without their parameter lists, as cProfile
	 * shows file:line(function); JSON keeps the signature */
	names_bare_copy(bare, sizeof(bare), f->name ? f->name : "?");
	fmt_trunc(name, sizeof(name), bare, TEXT_NAME_MAX, 0);
	if (f->flags & PROF_FUNC_NOSYM) {
		strcat(name, " [no symbol]");
	} else if (into < t->p->nfuncs) {
		names_bare_copy(bare, sizeof(bare),
				t->p->funcs[into].name ? t->p->funcs[into].name : "?");
		fmt_trunc(cont, sizeof(cont), bare, TEXT_NAME_MAX / 2, 0);
		strcat(name, " [inlined in ");
		strcat(name, cont);
		strcat(name, "]");
	}
	fmt_trunc(path, sizeof(path), text_path(t, f->file), TEXT_PATH_MAX, 1);
	fmt_func(buf, len, name, path, f->line, f->module);
}

static void text_sec(FILE *out, double ns)
{
	fprintf(out, " %8.3f", ns / 1e9);
}

static int text_cpu_table(struct text_ctx *t)
{
	const struct profile *p = t->p;
	struct cpu_profile view = *t->c, *c = &view;
	FILE *out = t->out;
	int key = cpu_sort_parse(t->o ? t->o->sort : NULL);
	size_t i, n;
	char buf[2048];

	if (key < 0)
		key = CPU_SORT_TOTTIME;
	/* --sort orders a copy of the functions: the result stays in tottime order */
	view.funcs = malloc((c->nfuncs ? c->nfuncs : 1) * sizeof(*view.funcs));
	if (!view.funcs)
		return -ENOMEM;
	if (c->nfuncs) /* memcpy's source must not be NULL, even for 0 bytes */
		memcpy(view.funcs, t->c->funcs, c->nfuncs * sizeof(*view.funcs));
	cpu_sort(c, p, key);
	n = c->nfuncs;
	if (t->limit >= 0 && (size_t)t->limit < n)
		n = (size_t)t->limit;

	fprintf(out, "CPU profile (cProfile-style, from samples)\n\n");
	/* the header's sample count (records), and the periods they weigh */
	if (c->weight != c->samples)
		fprintf(out, "         %llu samples (%llu periods of CPU) in %.3f CPU seconds\n\n",
			(unsigned long long)c->samples, (unsigned long long)c->weight,
			(double)c->cpu_ns / 1e9);
	else
		fprintf(out, "         %llu samples in %.3f CPU seconds\n\n",
			(unsigned long long)c->samples, (double)c->cpu_ns / 1e9);
	fprintf(out, "   Ordered by: %s\n", cpu_sort_desc(key));
	if (!t->o || !t->o->quiet) {
		fprintf(out, "   Note: sampling mode: ncalls is the number of samples (periods) with "
			"the function on the stack, not calls,\n");
		fprintf(out, "         so there is no time per call (percall: -); tottime = its own "
			"samples x period,\n         cumtime = samples with it anywhere on the stack "
			"x period.\n");
		if (p->inline_folded)
			fprintf(out, "         Inline view: fold: time in code the compiler inlined stays "
				"with the function it was inlined into\n"
				"         (as perf and gperftools count it); --inline expand "
				"shows inlined functions as rows.\n");
		else
			fprintf(out, "         Inline view: expand: functions the compiler inlined are "
				"rows of their own, marked [inlined in ...];\n"
				"         --inline fold keeps their time in the function they "
				"were inlined into, as perf does.\n");
	}
	fputc('\n', out);
	fprintf(out, "   ncalls  tottime  percall  cumtime  percall filename:lineno(function)\n");
	for (i = 0; i < n; i++) {
		const struct cpu_func *f = &c->funcs[i];

		/* pstats' columns; ncalls counts samples, so per call is no
		 * figure of this table: "-" keeps the layout */
		fprintf(out, "%9llu", (unsigned long long)f->total_w);
		text_sec(out, (double)f->self_ns);
		fprintf(out, "        -");
		text_sec(out, (double)f->total_ns);
		fprintf(out, "        -");
		text_func_name(t, buf, sizeof(buf), &p->funcs[f->func], f->inlined_into);
		fprintf(out, " %s\n", buf);
	}
	if (!c->nfuncs)
		fprintf(out, "   (no samples with a stack)\n");
	if (n < c->nfuncs)
		fprintf(out, "   (%zu more %s; use --limit)\n", c->nfuncs - n,
			text_plural(c->nfuncs - n, "function", "functions"));
	fputc('\n', out);
	free(view.funcs);
	return 0;
}

/* Lines with a file and line number only: a row of code without line
 * information is a bare address ("dd+0x5729"), which says nothing the CPU
 * table's [no symbol] row does not; the Data quality line says what to
 * install to get lines there. */
static void text_hot_lines(struct text_ctx *t)
{
	const struct cpu_profile *c = t->c;
	struct fmt_table *tb;
	size_t i, shown = 0, with = 0, without = 0, limit;
	char a[64], b[64], loc[4096];

	for (i = 0; i < c->nlines; i++)
		c->lines[i].line ? with++ : without++;
	if (!with) {
		if (without && (!t->o || !t->o->quiet))
			fprintf(t->out, "Hottest source lines: none with line information (no debug "
				"info where the samples are: see Data quality)\n\n");
		return;
	}
	limit = t->limit >= 0 && (size_t)t->limit < with ? (size_t)t->limit : with;
	tb = fmt_table_new();
	if (!tb)
		return;
	fmt_table_col(tb, "Line", FMT_LEFT | FMT_CUT_LEFT, 20, TEXT_PATH_MAX + 8);
	fmt_table_col(tb, "Self %", FMT_RIGHT, 7, 0);
	fmt_table_col(tb, "Self time", FMT_RIGHT, 10, 0);
	fmt_table_col(tb, "Function", FMT_LEFT, 0, TEXT_NAME_MAX);
	for (i = 0; i < c->nlines && shown < limit; i++) {
		const struct cpu_line *l = &c->lines[i];
		const struct prof_func *f = &t->p->funcs[l->func];

		if (!l->line)
			continue;
		snprintf(loc, sizeof(loc), "%s:%u", text_path(t, l->file), l->line);
		fmt_table_row(tb);
		fmt_table_cell(tb, "%s", loc);
		fmt_table_cell(tb, "%s", fmt_pct(a, sizeof(a), (double)l->self_ns, (double)c->cpu_ns));
		fmt_table_cell(tb, "%s", fmt_time(b, sizeof(b), l->self_ns));
		fmt_table_cell(tb, "%s", names_bare_copy(loc, sizeof(loc), f->name ? f->name : "?"));
		shown++;
	}
	fprintf(t->out, "Hottest source lines (self time of the innermost frame)\n\n");
	fmt_table_print(tb, t->out, FMT_PLAIN, 3);
	if (shown < with)
		fprintf(t->out, "   (%zu more %s; use --limit)\n", with - shown,
			text_plural(with - shown, "line", "lines"));
	if (without && (!t->o || !t->o->quiet))
		fprintf(t->out, "   (%zu %s without line information left out)\n", without,
			text_plural(without, "address", "addresses"));
	fputc('\n', t->out);
	fmt_table_free(tb);
}

/* Orders for the process and thread tables: CPU descending. */
static int text_proc_cmp(const void *a, const void *b)
{
	const struct cpu_process *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->process < y->process ? -1 : x->process > y->process;
}

static int text_thread_cmp(const void *a, const void *b)
{
	const struct cpu_thread *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* Exact CPU time from the kernel, "-" when unknown (0). */
static const char *text_measured(char *buf, size_t len, uint64_t ns)
{
	if (!ns)
		return "-";
	return fmt_time(buf, len, ns);
}

static void text_proc_exit(struct text_ctx *t, char *buf, size_t len, size_t idx)
{
	const struct prof_process *pr = &t->p->processes[idx];

	if (pr->clean_exit)
		snprintf(buf, len, "%d", pr->exit_code);
	else if (text_execd(t->p, idx))
		snprintf(buf, len, "exec");
	else if (idx == 0 && t->p->exit_signal > 0)
		text_exit_desc(buf, len, 0, t->p->exit_signal);
	else
		snprintf(buf, len, "no clean exit");
	if (pr->damaged) {
		size_t l = strlen(buf);

		snprintf(buf + l, len - l, ", damaged");
	}
}

static void text_processes(struct text_ctx *t)
{
	const struct profile *p = t->p;
	const struct cpu_profile *c = t->c;
	struct cpu_process *v;
	struct fmt_table *tb;
	size_t i, n;
	char a[64], b[64], m[64], ex[96];

	if (p->nprocesses <= 1)
		return;
	v = util_reallocarray(NULL, c->nprocs, sizeof(*v));
	tb = fmt_table_new();
	if (!v || !tb)
		goto out;
	memcpy(v, c->procs, c->nprocs * sizeof(*v));
	qsort(v, c->nprocs, sizeof(*v), text_proc_cmp);
	n = c->nprocs;
	if (t->limit >= 0 && (size_t)t->limit < n)
		n = (size_t)t->limit;
	fmt_table_col(tb, "PID", FMT_RIGHT, 7, 0);
	fmt_table_col(tb, "PPID", FMT_RIGHT, 7, 0);
	fmt_table_col(tb, "CPU", FMT_RIGHT, 10, 0);
	fmt_table_col(tb, "Measured", FMT_RIGHT, 10, 0);
	fmt_table_col(tb, "CPU %", FMT_RIGHT, 7, 0);
	fmt_table_col(tb, "Samples", FMT_RIGHT, 8, 0);
	fmt_table_col(tb, "Exit", FMT_LEFT, 4, 32);
	fmt_table_col(tb, "Command", FMT_LEFT, 0, 60);
	for (i = 0; i < n; i++) {
		const struct prof_process *pr = &p->processes[v[i].process];

		text_proc_exit(t, ex, sizeof(ex), v[i].process);
		fmt_table_row(tb);
		fmt_table_cell(tb, "%u", pr->pid);
		fmt_table_cell(tb, "%u", pr->ppid);
		fmt_table_cell(tb, "%s", fmt_time(a, sizeof(a), v[i].ns));
		fmt_table_cell(tb, "%s", text_measured(m, sizeof(m), v[i].measured_ns));
		fmt_table_cell(tb, "%s", fmt_pct(b, sizeof(b), (double)v[i].ns, (double)c->cpu_ns));
		fmt_table_cell(tb, "%llu", (unsigned long long)v[i].samples);
		fmt_table_cell(tb, "%s", ex);
		fmt_table_cell(tb, "%s",
			       pr->cmdline && *pr->cmdline ? pr->cmdline : pr->exe ? pr->exe : "?");
	}
	fprintf(t->out, "Processes\n\n");
	fmt_table_print(tb, t->out, FMT_PLAIN, 3);
	if (n < c->nprocs)
		fprintf(t->out, "   (%zu more %s; use --limit)\n", c->nprocs - n,
			text_plural(c->nprocs - n, "process", "processes"));
	fputc('\n', t->out);
out:
	free(v);
	fmt_table_free(tb);
}

static void text_threads(struct text_ctx *t)
{
	const struct profile *p = t->p;
	const struct cpu_profile *c = t->c;
	struct cpu_thread *v;
	struct fmt_table *tb;
	size_t i, n, nv;
	char a[64], b[64], m[64];

	if (text_distinct_tids(p) <= 1)
		return;
	v = util_reallocarray(NULL, c->nthreads, sizeof(*v));
	tb = fmt_table_new();
	if (!v || !tb)
		goto out;
	for (i = 0, nv = 0; i < c->nthreads; i++)
		if (c->threads[i].samples)
			v[nv++] = c->threads[i];
	qsort(v, nv, sizeof(*v), text_thread_cmp);
	n = nv;
	if (t->limit >= 0 && (size_t)t->limit < n)
		n = (size_t)t->limit;
	fmt_table_col(tb, "TID", FMT_RIGHT, 7, 0);
	fmt_table_col(tb, "Name", FMT_LEFT, 16, 32);
	fmt_table_col(tb, "PID", FMT_RIGHT, 7, 0);
	fmt_table_col(tb, "CPU", FMT_RIGHT, 10, 0);
	fmt_table_col(tb, "Measured", FMT_RIGHT, 10, 0);
	fmt_table_col(tb, "CPU %", FMT_RIGHT, 7, 0);
	fmt_table_col(tb, "Samples", FMT_RIGHT, 8, 0);
	for (i = 0; i < n; i++) {
		const struct prof_thread *th = &p->threads[v[i].thread];
		uint32_t pid = th->process < p->nprocesses ? p->processes[th->process].pid : 0;

		fmt_table_row(tb);
		fmt_table_cell(tb, "%u", th->tid);
		fmt_table_cell(tb, "%s", th->name && *th->name ? th->name : "-");
		fmt_table_cell(tb, "%u", pid);
		fmt_table_cell(tb, "%s", fmt_time(a, sizeof(a), v[i].ns));
		fmt_table_cell(tb, "%s", text_measured(m, sizeof(m), v[i].measured_ns));
		fmt_table_cell(tb, "%s", fmt_pct(b, sizeof(b), (double)v[i].ns, (double)c->cpu_ns));
		fmt_table_cell(tb, "%llu", (unsigned long long)v[i].samples);
	}
	fprintf(t->out, "Threads\n\n");
	fmt_table_print(tb, t->out, FMT_PLAIN, 3);
	if (n < nv)
		fprintf(t->out, "   (%zu more %s; use --limit)\n", nv - n,
			text_plural(nv - n, "thread", "threads"));
	if (nv < c->nthreads)
		fprintf(t->out, "   (%zu %s without samples not shown)\n", c->nthreads - nv,
			text_plural(c->nthreads - nv, "thread", "threads"));
	fputc('\n', t->out);
out:
	free(v);
	fmt_table_free(tb);
}

static void text_quality(struct text_ctx *t)
{
	char **w = t->a->warnings;
	size_t n = t->a->nwarnings;

	if (!n) {
		if (!t->o || !t->o->quiet)
			fprintf(t->out, "Data quality: no problems found. Sampling error is about "
				"±√n samples for a row with n samples.\n");
	} else {
		fprintf(t->out, "Data quality\n");
		fmt_lines_folded(t->out, "  - ", w, n);
		if (!t->o || !t->o->quiet)
			fprintf(t->out, "  Sampling error is about ±√n samples for a row with "
				"n samples.\n");
	}
}

/* The CUDA stack of the run: driver, runtime (its library's file names the
 * version), CUPTI, and the GPUs by model. */
static void text_env_cuda(struct text_ctx *t)
{
	const struct profile *p = t->p;
	const char *rt = NULL;
	uint32_t cupti = 0, driver = 0;
	size_t i, j;
	int first = 1;

	if (!p->ndevices && !p->ncuda_status)
		return;
	for (i = 0; i < p->ncuda_status; i++) {
		if (p->cuda_status[i].cupti_version)
			cupti = p->cuda_status[i].cupti_version;
		if (p->cuda_status[i].driver_version)
			driver = p->cuda_status[i].driver_version;
	}
	for (i = 0; i < p->nhitmods && !rt; i++)
		if (!strncmp(p->hitmods[i].file, "libcudart.so", 12))
			rt = p->hitmods[i].file;
	for (i = 0; i < p->nmodules && !rt; i++)
		if (!strncmp(p->modules[i].name, "libcudart.so", 12))
			rt = p->modules[i].name;
	fprintf(t->out, "  CUDA:       ");
	if (driver)
		fprintf(t->out, "driver %u.%u, ", driver / 1000, driver % 1000 / 10);
	fprintf(t->out, "runtime %s", rt ? rt : "unknown");
	if (cupti)
		fprintf(t->out, ", CUPTI API %u", cupti);
	/* Each GPU once, however many processes used it (by UUID). */
	for (i = 0; t->a->cuda && i < t->a->cuda->ngpus; i++) {
		const struct cuda_gpu *g = &t->a->cuda->gpus[i];
		unsigned n = 0;

		for (j = 0; j < i; j++)
			if (!strcmp(t->a->cuda->gpus[j].name, g->name))
				break;
		if (j < i)
			continue;
		for (j = i; j < t->a->cuda->ngpus; j++)
			n += !strcmp(t->a->cuda->gpus[j].name, g->name);
		fprintf(t->out, "%s%s x%u", first ? "; " : ", ", g->name, n);
		first = 0;
	}
	fputc('\n', t->out);
}

/* What torch.utils.bottleneck prints first: the machine, the program's build
 * and the tools' versions. */
static void text_environment(struct text_ctx *t)
{
	const struct prof_env *e = &t->p->env;
	FILE *out = t->out;

	if (!e->found)
		return;
	fprintf(out, "Environment\n");
	fprintf(out, "  Kernel:     %s\n", *e->kernel ? e->kernel : "unknown");
	fprintf(out, "  CPU:        %s, %d CPUs, frequency governor %s", *e->cpu_model ? e->cpu_model : "unknown model",
		e->cpus, *e->governor ? e->governor : "unknown");
	if (e->load[0] >= 0)
		fprintf(out, ", load %.2f %.2f %.2f at start", e->load[0], e->load[1], e->load[2]);
	fputc('\n', out);
	if (e->producer && *e->producer)
		fprintf(out, "  Program:    built by %s%s\n", e->producer,
			e->program_debuginfo ? "" : " (no debug info)");
	else
		fprintf(out, "  Program:    compiler unknown%s\n",
			e->program_debuginfo ? "" : " (no debug info)");
	fprintf(out, "  Tools:      glibc %s, libunwind %s (the agent's), elfutils %s (symbols)\n",
		*e->libc ? e->libc : "?", *e->libunwind ? e->libunwind : "?",
		*e->elfutils ? e->elfutils : "?");
	text_env_cuda(t);
	fputc('\n', out);
}

int report_text(FILE *out, const struct analysis *a, const struct report_opts *o)
{
	struct text_ctx t = { .out = out, .a = a, .p = a->profile, .o = o, .c = a->cpu };
	int ret;

	t.limit = o ? o->limit : 0;
	if (t.limit == 0)
		t.limit = TEXT_DEFAULT_LIMIT;
	if (getcwd(t.cwd, sizeof(t.cwd)))
		t.cwdlen = strlen(t.cwd);

	if (!o || !o->quiet) {
		text_environment(&t);
		text_header(&t);
	}
	if ((ret = text_cpu_table(&t)) < 0)
		return ret;
	text_hot_lines(&t);
	if ((ret = report_programs_text(out, a, o)) < 0)
		return ret;
	text_processes(&t);
	text_threads(&t);
	if ((ret = report_steps_text(out, a, o)) < 0)
		return ret;
	if ((ret = report_mem_text(out, a, o)) < 0)
		return ret;
	if ((ret = report_ops_text(out, a, o)) < 0)
		return ret;
	ret = report_cuda_text(out, a, o);
	if (ret < 0)
		return ret;
	if ((ret = report_wait_text(out, a, o)) < 0)
		return ret;
	if ((ret = report_dist_text(out, a, o)) < 0)
		return ret;
	text_quality(&t);
	return fflush(out) || ferror(out) ? -EIO : 0;
}
