/*
 * wait_text.c — the CPU waiting view of the text report, after the other
 * views and before the data-quality footer: the CPU overview (wall, CPU,
 * busy threads, parallel efficiency, what thread time went to, the critical
 * thread, the verdict, the CPU recommendations) for every CPU run, and with
 * --off-cpu where threads waited, lock contention, every thread on and off the
 * CPU and the wall-clock functions.  Also the header's "Off-CPU:" line, and
 * what an off-CPU stretch is called in a trace and a flame graph.
 * Formats struct wait_analysis only; every index into the profile is checked,
 * since a damaged profile may hold anything.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "fmt.h"
#include "names.h"
#include "util.h"
#include "wait.h"
#include "wait_report.h"

#define WAIT_TEXT_NAME_MAX 60    /* columns of a function name */
#define WAIT_TEXT_PATH_MAX 40    /* columns of a path, cut from the left */

const char *wait_offcpu_frame(uint32_t kind)
{
	static const char *const f[CBN_OFF_NKINDS] = {
		"[off-CPU: other]", "[off-CPU: futex]", "[off-CPU: io]", "[off-CPU: poll]",
		"[off-CPU: sleep]", "[off-CPU: child]", "[off-CPU: fault]", "[off-CPU: runnable]",
	};

	return kind < CBN_OFF_NKINDS ? f[kind] : f[CBN_OFF_OTHER];
}

char *wait_offcpu_label(char *buf, size_t len, uint32_t kind, const char *call)
{
	if (kind >= CBN_OFF_NKINDS)
		kind = CBN_OFF_OTHER; /* as the loader reads an unknown kind */
	if (call && *call)
		snprintf(buf, len, "off-CPU %s: %s", wait_kind_name((int)kind), call);
	else
		snprintf(buf, len, "off-CPU %s", wait_kind_name((int)kind));
	return buf;
}

void report_wait_header(FILE *out, const struct profile *p, const char *prefix, int verbose)
{
	uint64_t ticks = 0, looks = 0, records = 0, unconf = 0, nostack = 0, lost = 0;
	const char *reason = NULL;
	uint32_t rate = 0;
	int on = 0;
	size_t i;

	for (i = 0; i < p->nprocesses; i++) {
		const struct prof_offcpu_proc *oc = &p->processes[i].offcpu;

		if (oc->state == CBN_OFFCPU_REFUSED && !reason)
			reason = oc->reason && *oc->reason ? oc->reason : "no reason given";
		if (oc->state != CBN_OFFCPU_ON)
			continue;
		if (!on || !rate)
			rate = oc->rate_hz;
		on = 1;
		ticks += oc->ticks;
		looks += oc->looks;
		records += oc->records;
		unconf += oc->unconfirmed;
		nostack += oc->no_stack;
		lost += oc->lost;
	}
	if (!on && !reason)
		return;
	if (!on) {
		fprintf(out, "%snot recorded: %s\n", prefix, reason);
		return;
	}
	if (!verbose) {
		/* the wall sampler's counts are its own business (-v) */
		fprintf(out, "%srecorded at %u Hz", prefix, rate);
		if (lost)
			fprintf(out, ", %" PRIu64 " looks lost (file full)", lost);
		if (reason)
			fprintf(out, "; refused in some process: %s", reason);
		fputc('\n', out);
		return;
	}
	fprintf(out, "%s%u Hz wall sampler; %" PRIu64 " ticks, %" PRIu64 " thread looks, %" PRIu64
		" stretches recorded", prefix, rate, ticks, looks, records);
	if (unconf)
		fprintf(out, ", %" PRIu64 " stacks unconfirmed (the thread moved)", unconf);
	if (nostack)
		fprintf(out, ", %" PRIu64 " without a stack", nostack);
	if (lost)
		fprintf(out, ", %" PRIu64 " lost (file full)", lost);
	if (reason)
		fprintf(out, "; refused in some process: %s", reason);
	fputc('\n', out);
}

struct wt {
	FILE *out;
	const struct profile *p;
	const struct wait_analysis *w;
	const struct report_opts *o;
};

static const char *thread_name(const struct profile *p, uint32_t th)
{
	if (th >= p->nthreads || !p->threads[th].name || !*p->threads[th].name)
		return "-";
	return p->threads[th].name;
}

static uint32_t thread_tid(const struct profile *p, uint32_t th)
{
	return th < p->nthreads ? p->threads[th].tid : 0;
}

/* "file:line(name)" of a function index and a site's own file and line
 * (NULL file: the function's). */
static char *func_label(char *buf, size_t len, const struct profile *p, uint32_t func,
			const char *file, uint32_t line)
{
	char name[WAIT_TEXT_NAME_MAX * 4 + 8], path[WAIT_TEXT_PATH_MAX * 4 + 8];
	const struct prof_func *f;

	if (func >= p->nfuncs)
		return fmt_func(buf, len, "?", "", 0, "");
	f = &p->funcs[func];
	if (!file) {
		file = f->file;
		line = f->line;
	}
	names_bare_copy(path, sizeof(path), f->name ? f->name : "?");   /* no parameters */
	fmt_trunc(name, sizeof(name), path, WAIT_TEXT_NAME_MAX, 0);
	fmt_trunc(path, sizeof(path), fmt_rel_path(file), WAIT_TEXT_PATH_MAX, 1);
	return fmt_func(buf, len, name, path, line, f->module);
}

static const char *func_name(const struct profile *p, uint32_t func)
{
	return func < p->nfuncs && p->funcs[func].name ? p->funcs[func].name : "?";
}

static void ov_line(FILE *out, const char *label, const char *value)
{
	fprintf(out, "  %-26s %s\n", label, value);
}

/* The rows past --limit, with the share of whole (of what) they hold:
 * ns(i) is row i's part. */
#define MORE(out, shown, n, what, ns, whole, of)                                      \
	do {                                                                          \
		double rest_ = 0;                                                     \
		size_t i_;                                                            \
		for (i_ = (shown); i_ < (n); i_++)                                    \
			rest_ += (double)(ns);                                        \
		fmt_more((out), (shown), (n), (what), rest_, (double)(whole), (of));  \
	} while (0)

static void print_overview(struct wt *t)
{
	static const char *const act_label[WAIT_ACT_N] = {
		"Computing", "Spinning (busy-wait)", "In the kernel", "In the allocator",
		"In memcpy/memset", "In start-up (loader)",
	};
	const struct wait_analysis *w = t->w;
	const struct profile *p = t->p;
	FILE *out = t->out;
	char v[256], b1[64], b2[64];
	int a, quiet = t->o && t->o->quiet;

	fprintf(out, "CPU overview%s\n", w->windowed ? " (inside the capture windows)" : "");
	if (w->windowed) {
		snprintf(v, sizeof(v), "%s captured of the %s run",
			 util_fmt_time(b1, sizeof(b1), w->span_ns),
			 util_fmt_time(b2, sizeof(b2), w->wall_ns));
		ov_line(out, "Span", v);
	} else {
		ov_line(out, "Wall time", util_fmt_time(b1, sizeof(b1), w->wall_ns));
	}
	snprintf(v, sizeof(v), "%s of %s thread time (sampled)",
		 util_fmt_time(b1, sizeof(b1), w->cpu_ns),
		 util_fmt_time(b2, sizeof(b2), w->thread_ns));
	ov_line(out, "CPU time", v);
	snprintf(v, sizeof(v), "%u seen, %u busy (on the CPU >= 5%% of the %s or half their life), up to %u at once",
		 w->threads, w->busy_threads, w->windowed ? "span" : "wall", w->busy_at_once);
	ov_line(out, "Threads", v);
	/* the whole run's cores: a build of many processes is judged by them */
	if (w->cpus)
		snprintf(v, sizeof(v), "%.2f of %u CPUs busy on average (%.1f%%)", w->cores_used,
			 w->cpus, 100.0 * w->cores_used / w->cpus);
	else
		snprintf(v, sizeof(v), "%.2f busy on average", w->cores_used);
	ov_line(out, "CPUs", v);
	/* -q: tables only, no formula hints */
	if (quiet)
		snprintf(v, sizeof(v), "%.1f%%", 100.0 * w->efficiency);
	else
		snprintf(v, sizeof(v), "%.1f%%   = (CPU - spin) / (%s x %u: the busy threads at once, "
			 "at most the CPUs)", 100.0 * w->efficiency, w->windowed ? "span" : "wall",
			 w->usable);
	ov_line(out, "Parallel efficiency", v);
	/* shares of thread time, adding up to 100 %; the on-CPU rows also as
	 * shares of the CPU, the denominator of the header's kernel share */
	fprintf(out, "  %-26s %7s  %7s  %10s\n", "Share of thread time:", "thread", "CPU", "time");
	for (a = 0; a < WAIT_ACT_N; a++)
		fprintf(out, "    %-24s %6.1f%%  %6.1f%%  %10s\n", act_label[a], 100.0 * w->cpu_share[a],
			100.0 * w->of_cpu[a], util_fmt_time(b1, sizeof(b1), w->act_ns[a]));
	if (w->profiler_ns)
		fprintf(out, "    %-24s %6.1f%%           %10s%s\n", "In the profiler",
			100.0 * w->profiler_share, util_fmt_time(b1, sizeof(b1), w->profiler_ns),
			quiet ? "" : "  (on the CPU in its code: in no table)");
	if (w->offcpu) {
		fprintf(out, "    %-24s %6.1f%%           %10s\n", "Blocked (off the CPU)",
			100.0 * w->blocked_share,
			util_fmt_time(b1, sizeof(b1), w->blocked_est_ns - w->child_ns));
		if (w->child_ns)
			fprintf(out, "    %-24s %6.1f%%           %10s%s\n", "Waiting for children",
				100.0 * w->child_share, util_fmt_time(b1, sizeof(b1), w->child_ns),
				quiet ? "" : "  (their work is in their own rows)");
		fprintf(out, "    %-24s %6.1f%%           %10s%s\n", "Runnable (no core free)",
			100.0 * w->runq_share, util_fmt_time(b1, sizeof(b1), w->runq_ns),
			w->load_note && !quiet ? "  (other programs' load: Data quality)" : "");
		if (w->other_ns)
			fprintf(out, "    %-24s %6.1f%%           %10s%s\n", "Not seen",
				100.0 * w->other_share, util_fmt_time(b1, sizeof(b1), w->other_ns),
				quiet ? "" : "  (between the wall sampler's looks)");
	} else {
		fprintf(out, "    %-24s %6.1f%%           %10s%s\n", "Off the CPU",
			100.0 * w->blocked_share, util_fmt_time(b1, sizeof(b1), w->blocked_est_ns),
			quiet ? "" : "  (blocked or runnable: --off-cpu tells which)");
	}
	if (w->critical != PROF_NONE && w->critical < p->nthreads) {
		snprintf(v, sizeof(v), "%s (tid %u): alone busy for %.1f%% of the others' waiting, "
			 "%u waiting on it", thread_name(p, w->critical), thread_tid(p, w->critical),
			 100.0 * w->critical_share, w->critical_waiters);
		ov_line(out, "Critical thread", v);
	} else {
		ov_line(out, "Critical thread", "none stands out");
	}
	fputc('\n', out);
	fmt_recos(out, "CPU recommendations", w->findings, w->nfindings);
	if (w->nfindings)
		fputc('\n', out);
}

static int print_sites(struct wt *t)
{
	const struct wait_analysis *w = t->w;
	const struct profile *p = t->p;
	struct fmt_table *tb;
	char b[512];
	size_t i, n = report_limit(t->o, w->nsites);

	if (!w->nsites)
		return 0;
	if (!(tb = fmt_table_new()))
		return -ENOMEM;
	fmt_table_col(tb, "Off-CPU", FMT_RIGHT, 10, 0);
	fmt_table_col(tb, "% thread", FMT_RIGHT, 8, 0);
	fmt_table_col(tb, "Threads", FMT_RIGHT, 7, 0);
	fmt_table_col(tb, "Kind", FMT_LEFT, 8, 0);
	fmt_table_col(tb, "Blocking call", FMT_LEFT, 14, 32);
	fmt_table_col(tb, "filename:lineno(function)", FMT_LEFT, 0, 0);
	for (i = 0; i < n; i++) {
		const struct wait_site *s = &w->sites[i];

		fmt_table_row(tb);
		fmt_table_cell(tb, "%s", util_fmt_time(b, sizeof(b), s->ns));
		fmt_table_cell(tb, "%s", fmt_pct(b, sizeof(b), (double)s->ns, (double)w->thread_ns));
		fmt_table_cell(tb, "%u", s->nthreads);
		fmt_table_cell(tb, "%s", wait_kind_name((int)s->kind));
		fmt_table_cell(tb, "%s", s->call != PROF_NONE ? func_name(p, s->call) : "-");
		fmt_table_cell(tb, "%s", func_label(b, sizeof(b), p, s->func,
						    s->file && *s->file ? s->file : NULL, s->line));
	}
	fprintf(t->out, "Off-CPU: where threads waited\n\n");
	fmt_table_print(tb, t->out, FMT_PLAIN, 3);
	MORE(t->out, n, w->nsites, "sites", w->sites[i_].ns, w->off_ns, "the off-CPU time");
	fputc('\n', t->out);
	fmt_table_free(tb);
	return 0;
}

static int print_locks(struct wt *t)
{
	const struct wait_analysis *w = t->w;
	const struct profile *p = t->p;
	struct fmt_table *tb;
	char b[512];
	size_t i, n = report_limit(t->o, w->nlocks);

	if (!w->nlocks)
		return 0;
	if (!(tb = fmt_table_new()))
		return -ENOMEM;
	fmt_table_col(tb, "Wait", FMT_RIGHT, 10, 0);
	fmt_table_col(tb, "Contended", FMT_RIGHT, 9, 0);
	fmt_table_col(tb, "Waiters", FMT_RIGHT, 7, 0);
	fmt_table_col(tb, "Holder", FMT_LEFT, 12, 32);
	fmt_table_col(tb, "Held %", FMT_RIGHT, 7, 0);
	fmt_table_col(tb, "Lock", FMT_LEFT, 14, 0);
	fmt_table_col(tb, "filename:lineno(function)", FMT_LEFT, 0, 0);
	for (i = 0; i < n; i++) {
		const struct wait_lock *l = &w->locks[i];

		fmt_table_row(tb);
		fmt_table_cell(tb, "%s", util_fmt_time(b, sizeof(b), l->wait_ns));
		fmt_table_cell(tb, "%s", fmt_pct(b, sizeof(b), (double)l->contended_ns,
						 (double)w->span_ns));
		fmt_table_cell(tb, "%u", l->waiters);
		if (l->holder != PROF_NONE && l->holder < p->nthreads) {
			fmt_table_cell(tb, "%s (%u)", thread_name(p, l->holder), thread_tid(p, l->holder));
			fmt_table_cell(tb, "%.1f%%", 100.0 * l->holder_share);
		} else {
			fmt_table_cell(tb, "unknown");
			fmt_table_cell(tb, "-");
		}
		fmt_table_cell(tb, "0x%" PRIx64, l->addr);
		fmt_table_cell(tb, "%s", func_label(b, sizeof(b), p, l->func,
						    l->file && *l->file ? l->file : NULL, l->line));
	}
	fprintf(t->out, "Lock contention (Contended: %% of the wall some thread waited; Held %%: "
		"of the wait, while Holder owned it)\n\n");
	fmt_table_print(tb, t->out, FMT_PLAIN, 3);
	{
		uint64_t all = 0;

		for (i = 0; i < w->nlocks; i++)
			all += w->locks[i].wait_ns;
		MORE(t->out, n, w->nlocks, "locks", w->locks[i_].wait_ns, all, "the lock wait");
	}
	fputc('\n', t->out);
	fmt_table_free(tb);
	return 0;
}

static int print_threads(struct wt *t)
{
	const struct wait_analysis *w = t->w;
	const struct profile *p = t->p;
	struct fmt_table *tb;
	char b[64];
	size_t i, n = report_limit(t->o, w->nthreads_v);

	if (!w->nthreads_v)
		return 0;
	if (!(tb = fmt_table_new()))
		return -ENOMEM;
	fmt_table_col(tb, "TID", FMT_RIGHT, 7, 0);
	fmt_table_col(tb, "Name", FMT_LEFT, 16, 32);
	fmt_table_col(tb, "Wall", FMT_RIGHT, 10, 0);
	fmt_table_col(tb, "CPU", FMT_RIGHT, 10, 0);
	fmt_table_col(tb, "Spin", FMT_RIGHT, 10, 0);
	fmt_table_col(tb, "Off-CPU", FMT_RIGHT, 10, 0);
	fmt_table_col(tb, "futex", FMT_RIGHT, 10, 0);
	fmt_table_col(tb, "io+poll", FMT_RIGHT, 10, 0);
	fmt_table_col(tb, "sleep", FMT_RIGHT, 10, 0);
	fmt_table_col(tb, "Runnable", FMT_RIGHT, 10, 0);
	fmt_table_col(tb, "Lock wait", FMT_RIGHT, 10, 0);
	fmt_table_col(tb, "Busy %", FMT_RIGHT, 7, 0);
	for (i = 0; i < n; i++) {
		const struct wait_thread *th = &w->threads_v[i];

		fmt_table_row(tb);
		fmt_table_cell(tb, "%u", thread_tid(p, th->thread));
		fmt_table_cell(tb, "%s", thread_name(p, th->thread));
		fmt_table_cell(tb, "%s", util_fmt_time(b, sizeof(b), th->wall_ns));
		fmt_table_cell(tb, "%s", util_fmt_time(b, sizeof(b), th->cpu_ns));
		fmt_table_cell(tb, "%s", util_fmt_time(b, sizeof(b), th->act_ns[WAIT_ACT_SPIN]));
		fmt_table_cell(tb, "%s", util_fmt_time(b, sizeof(b), th->off_ns));
		fmt_table_cell(tb, "%s", util_fmt_time(b, sizeof(b), th->kind_ns[CBN_OFF_FUTEX]));
		fmt_table_cell(tb, "%s", util_fmt_time(b, sizeof(b), th->kind_ns[CBN_OFF_IO] +
							   th->kind_ns[CBN_OFF_POLL]));
		fmt_table_cell(tb, "%s", util_fmt_time(b, sizeof(b), th->kind_ns[CBN_OFF_SLEEP]));
		fmt_table_cell(tb, "%s", util_fmt_time(b, sizeof(b), th->kind_ns[CBN_OFF_RUNQ]));
		fmt_table_cell(tb, "%s", util_fmt_time(b, sizeof(b), th->lock_wait_ns));
		fmt_table_cell(tb, "%.1f%%", 100.0 * th->busy);
	}
	fprintf(t->out, "Threads on and off the CPU\n\n");
	fmt_table_print(tb, t->out, FMT_PLAIN, 3);
	MORE(t->out, n, w->nthreads_v, "threads", w->threads_v[i_].cpu_ns, w->cpu_ns, "the CPU");
	fputc('\n', t->out);
	fmt_table_free(tb);
	return 0;
}

static int print_wall(struct wt *t)
{
	const struct wait_analysis *w = t->w;
	const struct profile *p = t->p;
	struct fmt_table *tb;
	char b[512];
	size_t i, n = report_limit(t->o, w->nfuncs);

	if (!w->nfuncs)
		return 0;
	if (!(tb = fmt_table_new()))
		return -ENOMEM;
	fmt_table_col(tb, "Total", FMT_RIGHT, 10, 0);
	fmt_table_col(tb, "of it off", FMT_RIGHT, 10, 0);
	fmt_table_col(tb, "Self", FMT_RIGHT, 10, 0);
	fmt_table_col(tb, "of it off", FMT_RIGHT, 10, 0);
	fmt_table_col(tb, "filename:lineno(function)", FMT_LEFT, 0, 0);
	for (i = 0; i < n; i++) {
		const struct wait_func *f = &w->funcs[i];

		fmt_table_row(tb);
		fmt_table_cell(tb, "%s", util_fmt_time(b, sizeof(b), f->total_on + f->total_off));
		fmt_table_cell(tb, "%s", util_fmt_time(b, sizeof(b), f->total_off));
		fmt_table_cell(tb, "%s", util_fmt_time(b, sizeof(b), f->self_on + f->self_off));
		fmt_table_cell(tb, "%s", util_fmt_time(b, sizeof(b), f->self_off));
		fmt_table_cell(tb, "%s", func_label(b, sizeof(b), p, f->func, NULL, 0));
	}
	fprintf(t->out, "Wall clock: functions by time on and off the CPU (all threads)\n\n");
	fmt_table_print(tb, t->out, FMT_PLAIN, 3);
	MORE(t->out, n, w->nfuncs, "functions", w->funcs[i_].self_on + w->funcs[i_].self_off,
	     w->thread_ns, "the thread time (self)");
	if (w->nentry_funcs)
		fprintf(t->out, "   (%u process and thread entry frames left out: _start, "
			"__libc_start_main, start_thread, clone: each holds its threads' whole "
			"life)\n", w->nentry_funcs);
	fputc('\n', t->out);
	fmt_table_free(tb);
	return 0;
}

int report_wait_text(FILE *out, const struct analysis *a, const struct report_opts *o)
{
	struct wt t = { .out = out, .p = a->profile, .w = a->wait, .o = o };
	int ret;

	if (!t.w || !t.p)
		return 0;
	if (t.w->offcpu && ((ret = print_sites(&t)) < 0 || (ret = print_locks(&t)) < 0 ||
			    (ret = print_threads(&t)) < 0 || (ret = print_wall(&t)) < 0))
		return ret;
	print_overview(&t);
	return 0;
}
