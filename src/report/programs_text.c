/*
 * programs_text.c — "Programs" of the text report (programs_report.h): the
 * CPU of each program image and, for the programs that hold a share worth
 * reading, of the modules their time was in, as perf report --sort
 * comm,dso; every row left out is counted with its share.
 */
#include <errno.h>

#include "analysis.h"
#include "fmt.h"
#include "programs.h"
#include "programs_report.h"
#include "util.h"

#define PT_MODS_MIN_SHARE 0.05   /* a program's modules are listed from this share */
#define PT_MOD_MIN_SHARE 0.01    /* ... each one from this share of the run's CPU, */
#define PT_MODS_SHOWN 4          /* ... at most this many */

static void row(struct fmt_table *tb, uint64_t ns, uint64_t all, const char *procs,
		const char *wall, const char *what)
{
	char a[32], b[32];

	fmt_table_row(tb);
	fmt_table_cell(tb, "%s", fmt_pct(a, sizeof(a), (double)ns, (double)all));
	fmt_table_cell(tb, "%s", util_fmt_time(b, sizeof(b), ns));
	fmt_table_cell(tb, "%s", procs);
	fmt_table_cell(tb, "%s", wall);
	fmt_table_cell(tb, "%s", what);
}

/* A program's module rows, and what they leave out. */
static void module_rows(struct fmt_table *tb, const struct program *g, uint64_t all)
{
	uint64_t left = g->other_mods_ns;
	size_t k, shown = 0, nleft = g->other_mods;
	char what[160];

	for (k = 0; k < g->nmods; k++) {
		if (shown < PT_MODS_SHOWN &&
		    (double)g->mods[k].cpu_ns >= PT_MOD_MIN_SHARE * (double)all) {
			snprintf(what, sizeof(what), "  %s", g->mods[k].name);
			row(tb, g->mods[k].cpu_ns, all, "", "", what);
			shown++;
		} else {
			left += g->mods[k].cpu_ns;
			nleft++;
		}
	}
	if (nleft && left) {
		snprintf(what, sizeof(what), "  (%zu more module%s)", nleft, nleft == 1 ? "" : "s");
		row(tb, left, all, "", "", what);
	}
}

int report_programs_text(FILE *out, const struct analysis *a, const struct report_opts *o)
{
	const struct prog_analysis *g = a->programs;
	struct fmt_table *tb;
	size_t i, n, limit;
	uint64_t left = 0;
	char pr[32], wall[32];

	if (!g || g->with_cpu < 2 || !g->cpu_ns)
		return 0;
	limit = report_limit(o, g->n);
	if (!(tb = fmt_table_new()))
		return -ENOMEM;
	fmt_table_col(tb, "CPU %", FMT_RIGHT, 7, 0);
	fmt_table_col(tb, "CPU", FMT_RIGHT, 10, 0);
	fmt_table_col(tb, "Processes", FMT_RIGHT, 9, 0);
	fmt_table_col(tb, "Wall", FMT_RIGHT, 10, 0);
	fmt_table_col(tb, "Program / module", FMT_LEFT, 0, 60);
	for (i = n = 0; i < g->n; i++) {
		const struct program *p = &g->v[i];

		if (!p->cpu_ns)
			continue;
		if (n == limit) {
			left += p->cpu_ns;
			continue;
		}
		snprintf(pr, sizeof(pr), "%u", p->images);
		row(tb, p->cpu_ns, g->cpu_ns, pr, util_fmt_time(wall, sizeof(wall), p->wall_ns),
		    p->name);
		if ((double)p->cpu_ns >= PT_MODS_MIN_SHARE * (double)g->cpu_ns)
			module_rows(tb, p, g->cpu_ns);
		n++;
	}
	fprintf(out, "Programs (CPU by program image, then by the module of the innermost frame, "
		"as perf report --sort comm,dso)\n\n");
	fmt_table_print(tb, out, FMT_PLAIN, 3);
	if (left)
		fmt_more(out, n, g->with_cpu, "programs", (double)left, (double)g->cpu_ns, "the CPU");
	fputc('\n', out);
	fmt_table_free(tb);
	return 0;
}
