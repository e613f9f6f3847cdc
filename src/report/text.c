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
#include "text_int.h"
#include "util.h"
#include "wait.h"
#include "wait_report.h"

#define TEXT_NAME_MAX 80       /* columns of a function name in the CPU table */
#define TEXT_PATH_MAX 60       /* columns of a path before it is cut from the left */

/* --sort takes exactly the pstats keys of the CPU table and the key_averages
 * keys of the CUDA tables, torch's device_* spellings included, and the keys
 * of the memory allocation-sites table: each table's own parser decides, so
 * the lists live in one place each (analysis/cpu/cpu.c, analysis/cuda/cuda_tables.c,
 * analysis/mem/memory.c).  Each table falls back to its own default for a key of the
 * other kind.  The parsers reject NULL. */
int report_sort_key_valid(const char *key)
{
	return cpu_sort_parse(key) >= 0 || cuda_sort_key_valid(key) || mem_sort_key_valid(key);
}

static const char *text_plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* A row's function: name, then [no symbol] for code grouped by the unwind
 * tables, or [inlined in CONTAINER] for a function the compiler inlined
 * (into: its containing function, PROF_NONE when it was never inlined). */
static void text_func_name(struct text_ctx *t, char *buf, size_t len, const struct prof_func *f,
			   uint32_t into)
{
	char name[TEXT_NAME_MAX * 8 + 32], path[TEXT_PATH_MAX * 4 + 8], cont[TEXT_NAME_MAX * 4 + 8];

	char bare[TEXT_NAME_MAX * 8 + 32];

	/* a builtin counted by --calls: cProfile's row name, as pstats prints it */
	if (f->label) {
		fmt_trunc(buf, len, f->label, TEXT_NAME_MAX + TEXT_PATH_MAX, 0);
		return;
	}
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
	fmt_trunc(path, sizeof(path), fmt_rel_path(f->file), TEXT_PATH_MAX, 1);
	fmt_func(buf, len, name, path, f->line, f->module);
}

static void text_sec(FILE *out, double ns)
{
	fprintf(out, " %8.3f", ns / 1e9);
}

/*
 * pstats' columns of one function.  A counted function (Python, --calls)
 * has its exact calls ("total/primitive" when some were recursive) and the
 * times per call; any other has its sample count and "-" per call (what
 * each means: the note under the table, docs/reading-the-report.md).
 */
static void text_cpu_row(FILE *out, const struct cpu_func *f)
{
	char nc[48];

	if (!f->counted || !f->calls) {
		fprintf(out, "%9llu", (unsigned long long)f->total_w);
		text_sec(out, (double)f->self_ns);
		fprintf(out, "        -");
		text_sec(out, (double)f->total_ns);
		fprintf(out, "        -");
		return;
	}
	if (f->primitive != f->calls)
		snprintf(nc, sizeof(nc), "%llu/%llu", (unsigned long long)f->calls,
			 (unsigned long long)f->primitive);
	else
		snprintf(nc, sizeof(nc), "%llu", (unsigned long long)f->calls);
	fprintf(out, "%9s", nc);
	text_sec(out, (double)f->self_ns);
	text_sec(out, (double)f->self_ns / (double)f->calls);
	text_sec(out, (double)f->total_ns);
	text_sec(out, f->primitive ? (double)f->total_ns / (double)f->primitive : 0.0);
}

/* 1 when a process counted the builtins its Python code called (--calls=builtins). */
static int text_builtins_counted(const struct profile *p)
{
	size_t i;

	for (i = 0; i < p->nprocesses; i++)
		if (p->processes[i].python.calls_flags & CBN_PYCALLS_BUILTINS)
			return 1;
	return 0;
}

/* Under --calls: the exact calls of the whole run, as cProfile's header
 * gives them, and which rows have them. */
static void text_cpu_counted(FILE *out, const struct profile *p, const struct cpu_profile *c)
{
	uint64_t calls = 0, prim = 0;
	size_t i, rows = cpu_counted_rows(c);

	for (i = 0; i < p->nprocesses; i++) {
		calls += p->processes[i].python.calls;
		prim += p->processes[i].python.primitive;
	}
	if (!calls)
		return;
	fprintf(out, "         %llu Python function calls (%llu primitive calls), counted exactly\n",
		(unsigned long long)calls, (unsigned long long)prim);
	fprintf(out, "         ncalls: exact calls on the %zu %s counted (Python functions%s; "
		"total/primitive when recursive; per call: sampled time / calls), samples on "
		"the others (per call: -)\n\n", rows, rows == 1 ? "row" : "rows",
		text_builtins_counted(p) ? " and the builtins they called" : "");
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
	n = report_limit(t->o, c->nfuncs);

	fprintf(out, "CPU profile (cProfile-style, from samples)\n\n");
	/* the header's sample count (records), and the periods they weigh */
	if (c->weight != c->samples)
		fprintf(out, "         %llu samples (%llu periods of CPU) in %.3f CPU seconds\n\n",
			(unsigned long long)c->samples, (unsigned long long)c->weight,
			(double)c->cpu_ns / 1e9);
	else
		fprintf(out, "         %llu samples in %.3f CPU seconds\n\n",
			(unsigned long long)c->samples, (double)c->cpu_ns / 1e9);
	text_cpu_counted(out, p, c);
	fprintf(out, "   Ordered by: %s%s\n",
		key == CPU_SORT_NCALLS && cpu_counted_rows(c) ? "exact calls, then samples (ncalls)"
							       : cpu_sort_desc(key),
		p->inline_folded ? "; inline view: fold (inlined code counts in the function it "
				   "was inlined into)" : "");
	/* what the columns mean in sampling mode (ncalls counts samples, so
	 * percall is "-") is said once, in docs/reading-the-report.md */
	fputc('\n', out);
	fprintf(out, "   ncalls  tottime  percall  cumtime  percall filename:lineno(function)\n");
	for (i = 0; i < n; i++) {
		const struct cpu_func *f = &c->funcs[i];

		text_cpu_row(out, f);
		text_func_name(t, buf, sizeof(buf), &p->funcs[f->func], f->inlined_into);
		fprintf(out, " %s\n", buf);
	}
	if (!c->nfuncs)
		fprintf(out, "   (no samples with a stack)\n");
	if (n < c->nfuncs) {
		uint64_t rest = 0;

		for (i = n; i < c->nfuncs; i++)
			rest += c->funcs[i].self_ns;
		fmt_more(out, n, c->nfuncs, text_plural(c->nfuncs - n, "function", "functions"),
			 (double)rest, (double)c->cpu_ns, "the self time");
	}
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
	size_t i, k, shown = 0, with = 0, without = 0, limit;
	uint64_t nl;
	char a[64], b[64], loc[4096];

	for (i = 0; i < c->nlines; i++)
		c->lines[i].line ? with++ : without++;
	if (!with) {
		if (without && (!t->o || !t->o->quiet))
			fprintf(t->out, "Hottest source lines: none with line information (no debug "
				"info where the samples are: see Data quality)\n\n");
		return;
	}
	limit = report_limit(t->o, with);
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
		snprintf(loc, sizeof(loc), "%s:%u", fmt_rel_path(l->file), l->line);
		fmt_table_row(tb);
		fmt_table_cell(tb, "%s", loc);
		fmt_table_cell(tb, "%s", fmt_pct(a, sizeof(a), (double)l->self_ns, (double)c->cpu_ns));
		fmt_table_cell(tb, "%s", util_fmt_time(b, sizeof(b), l->self_ns));
		fmt_table_cell(tb, "%s", names_bare_copy(loc, sizeof(loc), f->name ? f->name : "?"));
		shown++;
	}
	/* how much of the CPU the table cannot show, first: perl without debug
	 * info has 89 % there, and the lines shown are the rest's */
	nl = c->cpu_ns > c->line_ns ? c->cpu_ns - c->line_ns : 0;
	if (nl * 2 > c->cpu_ns)
		fprintf(t->out, "Hottest source lines (self time of the innermost frame; %s of the "
			"CPU is in code without line information, left out: see Data quality)\n\n",
			fmt_pct(a, sizeof(a), (double)nl, (double)c->cpu_ns));
	else
		fprintf(t->out, "Hottest source lines (self time of the innermost frame)\n\n");
	fmt_table_print(tb, t->out, FMT_PLAIN, 3);
	if (shown < with) {
		uint64_t rest = c->line_ns;

		for (i = 0, k = 0; i < c->nlines && k < shown; i++)
			if (c->lines[i].line) {
				rest -= c->lines[i].self_ns;
				k++;
			}
		fmt_more(t->out, shown, with, text_plural(with - shown, "line", "lines"),
			 (double)rest, (double)c->cpu_ns, "the CPU");
	}
	if (nl && without && (!t->o || !t->o->quiet))
		fprintf(t->out, "   (%s of the CPU in code without line information left out: %zu "
			"%s)\n", fmt_pct(a, sizeof(a), (double)nl, (double)c->cpu_ns), without,
			text_plural(without, "address", "addresses"));
	else if (nl && (!t->o || !t->o->quiet))
		fprintf(t->out, "   (%s of the CPU in code without line information left out)\n",
			fmt_pct(a, sizeof(a), (double)nl, (double)c->cpu_ns));
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
	return util_fmt_time(buf, len, ns);
}

static void text_proc_exit(struct text_ctx *t, char *buf, size_t len, size_t idx)
{
	const struct prof_process *pr = &t->p->processes[idx];

	/* the launcher's child's last image: the launcher waited for it (it
	 * may have had no agent to say: a static program, Valgrind's client) */
	int launched = !t->p->attached_pid && pr->pid == t->p->processes[0].pid;

	if (pr->exited)
		snprintf(buf, len, "%d", pr->exit_code);
	else if (text_execd(t->p, idx))
		snprintf(buf, len, "exec");
	else if (launched && t->p->exit_signal > 0)
		text_exit_desc(buf, len, 0, t->p->exit_signal);
	else if (launched && t->p->exit_status >= 0)
		snprintf(buf, len, "%d", t->p->exit_status);
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
	n = report_limit(t->o, c->nprocs);
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
		fmt_table_cell(tb, "%s", util_fmt_time(a, sizeof(a), v[i].ns));
		fmt_table_cell(tb, "%s", text_measured(m, sizeof(m), v[i].measured_ns));
		fmt_table_cell(tb, "%s", fmt_pct(b, sizeof(b), (double)v[i].ns, (double)c->cpu_ns));
		fmt_table_cell(tb, "%llu", (unsigned long long)v[i].samples);
		fmt_table_cell(tb, "%s", ex);
		fmt_table_cell(tb, "%s",
			       pr->cmdline && *pr->cmdline ? pr->cmdline : pr->exe ? pr->exe : "?");
	}
	fprintf(t->out, "Processes\n\n");
	fmt_table_print(tb, t->out, FMT_PLAIN, 3);
	if (n < c->nprocs) {
		uint64_t rest = 0;

		for (i = n; i < c->nprocs; i++)
			rest += v[i].ns;
		fmt_more(t->out, n, c->nprocs, text_plural(c->nprocs - n, "process", "processes"),
			 (double)rest, (double)c->cpu_ns, "the CPU");
	}
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
	n = report_limit(t->o, nv);
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
		fmt_table_cell(tb, "%s", util_fmt_time(a, sizeof(a), v[i].ns));
		fmt_table_cell(tb, "%s", text_measured(m, sizeof(m), v[i].measured_ns));
		fmt_table_cell(tb, "%s", fmt_pct(b, sizeof(b), (double)v[i].ns, (double)c->cpu_ns));
		fmt_table_cell(tb, "%llu", (unsigned long long)v[i].samples);
	}
	fprintf(t->out, "Threads\n\n");
	fmt_table_print(tb, t->out, FMT_PLAIN, 3);
	if (n < nv) {
		uint64_t rest = 0;

		for (i = n; i < nv; i++)
			rest += v[i].ns;
		fmt_more(t->out, n, nv, text_plural(nv - n, "thread", "threads"), (double)rest,
			 (double)c->cpu_ns, "the CPU");
	}
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

int report_text(FILE *out, const struct analysis *a, const struct report_opts *o)
{
	struct text_ctx t = { .out = out, .a = a, .p = a->profile, .o = o, .c = a->cpu };
	int ret;

	t.verbose = o && o->verbose;

	if (!o || !o->quiet) {
		if (t.verbose)
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
