/*
 * steps_text.c — the steps part of the text report, between the CPU tables
 * and the memory view: what was captured (capture controls), where the steps
 * came from, the table of steps, their distribution, the slowest steps with
 * what grew in them, and the step recommendations.  Formats struct
 * step_analysis and prof_process.capture only.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "fmt.h"
#include "steps.h"
#include "steps_report.h"
#include "util.h"

#define STEPS_TEXT_NAME_MAX 60   /* columns of a function or kernel name */

/* "schedule=wait=1,active=3 delay_ns=5000000000" -> "schedule wait=1,active=3 delay 5.000s" */
static void spec_words(char *buf, size_t len, const char *spec)
{
	const char *p = spec;
	size_t o = 0;

	buf[0] = '\0';
	while (*p && o + 1 < len) {
		size_t n = strcspn(p, " "), k = strcspn(p, "=");
		char tmp[64];

		if (k < n && (!strncmp(p, "delay_ns=", 9) || !strncmp(p, "duration_ns=", 12))) {
			uint64_t ns = strtoull(p + k + 1, NULL, 10);

			o += (size_t)snprintf(buf + o, len - o, "%s%.*s %s", o ? " " : "",
					      (int)(k - 3), p, util_fmt_time(tmp, sizeof(tmp), ns));
		} else if (k < n) {
			o += (size_t)snprintf(buf + o, len - o, "%s%.*s %.*s", o ? " " : "", (int)k,
					      p, (int)(n - k - 1), p + k + 1);
		} else {
			o += (size_t)snprintf(buf + o, len - o, "%s%.*s", o ? " " : "", (int)n, p);
		}
		if (o >= len)
			o = len - 1;
		p += n;
		while (*p == ' ')
			p++;
	}
}

/* The controls of the first controlled process, "" when none. */
static const char *controls_of(const struct profile *p)
{
	size_t i;

	for (i = 0; i < p->nprocesses; i++)
		if (p->processes[i].capture.mode == CBN_CAPTURE_CONTROLLED)
			return p->processes[i].capture.spec ? p->processes[i].capture.spec : "";
	return NULL;
}

static void print_captured(FILE *out, const struct profile *p, const char *spec,
			   const char *prefix)
{
	char words[256], t1[32], t2[32];
	uint64_t inside = 0;
	size_t i;

	for (i = 0; i < p->nwindows; i++)
		inside += p->windows[i].end - p->windows[i].start;
	spec_words(words, sizeof(words), spec);
	fprintf(out, "%s%zu window%s, %s of the %s run (%s)%s\n", prefix, p->nwindows,
		p->nwindows == 1 ? "" : "s", util_fmt_time(t1, sizeof(t1), inside),
		util_fmt_time(t2, sizeof(t2), p->wall_ns), *words ? words : "capture controls",
		p->nwindows ? "" : ": nothing was recorded");
}

void report_steps_captured(FILE *out, const struct profile *p, const char *prefix)
{
	const char *spec = controls_of(p);

	if (spec)
		print_captured(out, p, spec, prefix);
}

static void print_source(FILE *out, const struct profile *p, const struct step_analysis *s,
			 const char *spec)
{
	char words[256] = "";
	uint64_t calls = 0;
	size_t i;

	for (i = 0; i < p->nprocesses; i++)
		calls += p->processes[i].capture.steps;
	if (spec)
		spec_words(words, sizeof(words), spec);
	if (s->source == STEP_SRC_MARKER && !strncmp(s->what, "cbn_step()", 10) && calls > s->nsteps)
		fprintf(out, "Steps: %" PRIu64 " from %s, %zu recorded", calls, s->what, s->nsteps);
	else if (s->source == STEP_SRC_FUNC)
		fprintf(out, "Steps: %zu from %s (found on the samples)", s->nsteps, s->what);
	else
		fprintf(out, "Steps: %zu from %s", s->nsteps, s->what);
	if (spec)
		fprintf(out, " (%s)", *words ? words : "capture controls");
	fputc('\n', out);
	if (s->counts) {
		char b[32];

		fprintf(out, "  each step: %s", s->counts);
		if (s->between_ns)
			fprintf(out, "; the %s between steps are in none",
				util_fmt_time(b, sizeof(b), s->between_ns));
		fputc('\n', out);
	}
	if (s->precision)
		fprintf(out, "  precision: %s\n", s->precision);
}

static void print_table(FILE *out, const struct analysis *an, const struct step_analysis *s,
			const struct report_opts *o)
{
	const struct profile *p = an->profile;
	struct fmt_table *t = fmt_table_new();
	int gpu = p->ngpu_ops > 0 || p->ncuda_api > 0, mem = p->nmem_counters > 0, pid = 0;
	char b[48];
	size_t i, shown = report_limit(o, s->nsteps);

	if (!t)
		return;
	for (i = 1; i < s->nsteps; i++)
		pid |= s->steps[i].process != s->steps[0].process;
	if (pid)
		fmt_table_col(t, "PID", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Step", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Duration", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "CPU", FMT_RIGHT, 0, 0);
	if (gpu) {
		fmt_table_col(t, "GPU busy", FMT_RIGHT, 0, 0);
		fmt_table_col(t, "Sync wait", FMT_RIGHT, 0, 0);
		fmt_table_col(t, "Kernels", FMT_RIGHT, 0, 0);
		fmt_table_col(t, "Copies", FMT_RIGHT, 0, 0);
	}
	if (mem)
		fmt_table_col(t, "Mem peak", FMT_RIGHT, 0, 0);
	for (i = 0; i < shown; i++) {
		const struct step *st = &s->steps[i];

		fmt_table_row(t);
		if (pid)
			fmt_table_cell(t, "%u", st->process < p->nprocesses ?
						       p->processes[st->process].pid : 0);
		fmt_table_cell(t, "%" PRIu64, st->number);
		fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), st->end - st->start));
		fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), st->cpu_ns));
		if (gpu) {
			fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), st->gpu_busy_ns));
			fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), st->sync_ns));
			fmt_table_cell(t, "%u", st->kernels);
			fmt_table_cell(t, "%u", st->copies);
		}
		if (mem)
			fmt_table_cell(t, "%s", st->mem_peak ? fmt_bytes(b, sizeof(b), st->mem_peak) :
							       "-");
	}
	fmt_table_print(t, out, FMT_RULES, 0);
	fmt_table_free(t);
	if (shown < s->nsteps) {
		uint64_t rest = 0;

		for (i = shown; i < s->nsteps; i++)
			rest += s->steps[i].end - s->steps[i].start;
		fmt_more(out, shown, s->nsteps, "steps", (double)rest, (double)s->total_ns,
			 "the steps' time");
	}
}

static void print_distribution(FILE *out, const struct step_analysis *s)
{
	char a[32], b[32], c[32], d[32], e[32], f[32];

	fprintf(out, "Step time: min %s, median %s, p90 %s, max %s (mean %s, total %s over %zu "
		     "steps)\n",
		util_fmt_time(a, sizeof(a), s->min_ns), util_fmt_time(b, sizeof(b), s->median_ns),
		util_fmt_time(c, sizeof(c), s->p90_ns), util_fmt_time(d, sizeof(d), s->max_ns),
		util_fmt_time(e, sizeof(e), s->mean_ns), util_fmt_time(f, sizeof(f), s->total_ns),
		s->nsteps);
}

static void print_slow(FILE *out, const struct step_analysis *s)
{
	size_t i, k;

	if (!s->nslow)
		return;
	fprintf(out, "\nSlowest steps (over 1.5x the median), and what grew in them:\n");
	for (i = 0; i < s->nslow; i++) {
		const struct step_slow *sl = &s->slow[i];
		const struct step *st = &s->steps[sl->step];
		char t[32], h[32], m[48], name[STEPS_TEXT_NAME_MAX * 4 + 8];

		fprintf(out, "  step %" PRIu64 ": %s, %.1fx the median\n", st->number,
			util_fmt_time(t, sizeof(t), st->end - st->start), sl->ratio);
		for (k = 0; k < sl->ngrew; k++) {
			const struct step_growth *g = &sl->grew[k];

			fmt_trunc(name, sizeof(name), g->name ? g->name : "?", STEPS_TEXT_NAME_MAX, 0);
			if (g->median_ns)
				util_fmt_time(m, sizeof(m), g->median_ns);
			else
				snprintf(m, sizeof(m), "0: absent from most steps");
			fprintf(out, "      %s%-*s  +%s (%s here, median %s)\n", g->gpu ? "kernel " : "",
				g->gpu ? 0 : STEPS_TEXT_NAME_MAX / 2, name,
				util_fmt_time(t, sizeof(t), g->step_ns - g->median_ns),
				util_fmt_time(h, sizeof(h), g->step_ns), m);
		}
		if (!sl->ngrew)
			fprintf(out, "      (no function or kernel took more than its median: the time "
				     "went off the CPU, e.g. waiting)\n");
	}
}

int report_steps_text(FILE *out, const struct analysis *an, const struct report_opts *o)
{
	const struct step_analysis *s = an->steps;
	const struct profile *p = an->profile;
	const char *spec = controls_of(p);

	/* the header says what was captured; without it (-q), this section */
	if (spec && o && o->quiet)
		print_captured(out, p, spec, "Captured: ");
	if (!s) {
		if (spec && o && o->quiet)
			fputc('\n', out);
		return 0;
	}
	print_source(out, p, s, spec);
	print_table(out, an, s, o);
	print_distribution(out, s);
	print_slow(out, s);
	if (s->nfindings)
		fputc('\n', out);
	fmt_recos(out, "Step recommendations", s->findings, s->nfindings);
	fputc('\n', out);
	return 0;
}
