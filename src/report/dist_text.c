/*
 * dist_text.c — the text report's "Distributed run" section (dist.h,
 * docs/distributed.md "The merged report"): one header line, the per-rank
 * table, the straggler sentence, the split per rank, the top MPI call sites,
 * the collectives, the message sizes and the recommendations.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../format/cbn_format.h"
#include "analysis.h"
#include "dist.h"
#include "dist_report.h"
#include "fmt.h"
#include "util.h"

const char *dist_clock_name(uint32_t source)
{
	switch (source) {
	case PROF_CLOCK_SAME_HOST: return "same-host";
	case PROF_CLOCK_MPI: return "mpi";
	case PROF_CLOCK_REALTIME: return "realtime";
	}
	return "none";
}

const char *dist_source_name(uint32_t source)
{
	switch (source) {
	case CBN_RANK_OMPI: return "ompi";
	case CBN_RANK_PMIX: return "pmix";
	case CBN_RANK_PMI: return "pmi";
	case CBN_RANK_SLURM: return "slurm";
	case CBN_RANK_TORCH: return "torch";
	case CBN_RANK_MPI: return "mpi";
	}
	return "none";
}

/* Rows of the per-rank table beyond which only the extremes are shown. */
#define DIST_RANK_ROWS 32

static void clock_line(FILE *out, const struct dist_analysis *d)
{
	char b[32];

	if (d->clock_uncertainty_ns == UINT64_MAX)
		fprintf(out, "clock uncertainty unknown (CLOCK_REALTIME across hosts)");
	else if (d->clock_uncertainty_ns == 0)
		fprintf(out, "one clock (same host)");
	else
		fprintf(out, "clocks aligned within %s", util_fmt_time(b, sizeof(b),
								   d->clock_uncertainty_ns));
}

static int show_rank(const struct dist_analysis *d, size_t i)
{
	/* many ranks: the first and last few, and the straggler */
	return d->nranks <= DIST_RANK_ROWS || i < DIST_RANK_ROWS / 2 - 2 ||
	       i + DIST_RANK_ROWS / 2 - 2 >= d->nranks || d->ranks[i].rank == d->straggler;
}

static void rank_table(FILE *out, const struct dist_analysis *d)
{
	struct fmt_table *t = fmt_table_new();
	char b[6][32];
	size_t i, hidden = 0;

	if (!t)
		return;
	fmt_table_col(t, "Rank", FMT_RIGHT, 4, 0);
	fmt_table_col(t, "Host", FMT_LEFT, 0, 24);
	fmt_table_col(t, "PID", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Wall", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "CPU", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "GPU", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "MPI %", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "MPI wait", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Compute/step", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Steps", FMT_RIGHT, 0, 0);
	for (i = 0; i < d->nranks; i++) {
		const struct dist_rank *r = &d->ranks[i];

		if (!show_rank(d, i)) {
			hidden++;
			continue;
		}
		fmt_table_row(t);
		fmt_table_cell(t, "%d%s", r->rank, r->rank == d->straggler ? "*" : "");
		fmt_table_cell(t, "%s", r->host[0] ? r->host : "?");
		fmt_table_cell(t, "%u%s", r->pid, r->crashed ? " (crashed)" : "");
		fmt_table_cell(t, "%s", util_fmt_time(b[0], sizeof(b[0]), r->wall_ns));
		fmt_table_cell(t, "%s", util_fmt_time(b[1], sizeof(b[1]), r->cpu_ns));
		fmt_table_cell(t, "%s",
			       r->gpu_ns ? util_fmt_time(b[2], sizeof(b[2]), r->gpu_ns) : "-");
		fmt_table_cell(t, "%s", fmt_pct(b[3], sizeof(b[3]), (double)r->mpi_ns,
						(double)r->wall_ns));
		fmt_table_cell(t, "%s", util_fmt_time(b[4], sizeof(b[4]), r->mpi_wait_ns));
		fmt_table_cell(t, "%s", util_fmt_time(b[5], sizeof(b[5]), r->compute_per_step_ns));
		fmt_table_cell(t, "%zu", r->nsteps);
	}
	fmt_table_print(t, out, FMT_RULES, 2);
	fmt_table_free(t);
	if (hidden)
		fprintf(out, "  (%zu ranks not shown: --ranks LIST or --json for all)\n", hidden);
}

static void straggler_line(FILE *out, const struct dist_analysis *d)
{
	size_t i;

	if (d->nranks < 2)
		return;
	if (d->straggler < 0) {
		fprintf(out, "  Balanced: compute per step max / mean = %.2f (no straggler below "
			     "1.10)\n", d->imbalance);
		return;
	}
	for (i = 0; i < d->nfindings; i++)
		if (strcmp(d->findings[i].id, "dist-straggler") == 0) {
			fprintf(out, "  Straggler: %s (load imbalance %.2f)\n",
				d->findings[i].evidence, d->imbalance);
			return;
		}
	fprintf(out, "  Straggler: rank %d (load imbalance %.2f)\n", d->straggler, d->imbalance);
}

static void split_table(FILE *out, const struct dist_analysis *d)
{
	struct fmt_table *t = fmt_table_new();
	char b[4][32];
	size_t i;
	int gpu = 0;

	if (!t)
		return;
	for (i = 0; i < d->nranks; i++)
		gpu |= d->ranks[i].split.gpu;
	fprintf(out, "\n  Computation / communication per rank (%s; docs/distributed.md):\n",
		gpu ? "GPU ops where a rank had them, else host" : "host side: MPI time against "
								    "sampled CPU");
	fmt_table_col(t, "Rank", FMT_RIGHT, 4, 0);
	fmt_table_col(t, "Computation", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Overlapping", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Communication", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Other", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "From", FMT_LEFT, 0, 0);
	for (i = 0; i < d->nranks; i++) {
		const struct dist_split *s = &d->ranks[i].split;
		double w = (double)s->wall_ns;

		if (!show_rank(d, i))
			continue;
		fmt_table_row(t);
		fmt_table_cell(t, "%d", d->ranks[i].rank);
		fmt_table_cell(t, "%s", fmt_pct(b[0], sizeof(b[0]), (double)s->computation_ns, w));
		fmt_table_cell(t, "%s", fmt_pct(b[1], sizeof(b[1]), (double)s->overlap_ns, w));
		fmt_table_cell(t, "%s", fmt_pct(b[2], sizeof(b[2]), (double)s->communication_ns, w));
		fmt_table_cell(t, "%s", fmt_pct(b[3], sizeof(b[3]), (double)s->other_ns, w));
		fmt_table_cell(t, "%s", s->gpu ? "gpu" : "host");
	}
	fmt_table_print(t, out, FMT_RULES, 2);
	fmt_table_free(t);
}

static void site_table(FILE *out, const struct dist_analysis *d, int limit)
{
	struct fmt_table *t;
	char b[4][32];
	size_t i;

	if (!d->nsites)
		return;
	t = fmt_table_new();
	if (!t)
		return;
	fprintf(out, "\n  Top MPI call sites (summed over ranks; COV: spread of a site's time "
		     "across ranks):\n");
	fmt_table_col(t, "Call", FMT_LEFT, 0, 0);
	fmt_table_col(t, "Site", FMT_LEFT, 0, 48);
	fmt_table_col(t, "Calls", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Time", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Wait", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "App%", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "MPI%", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "COV", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Bytes", FMT_RIGHT, 0, 0);
	for (i = 0; i < d->nsites && (int)i < limit; i++) {
		const struct dist_site *s = &d->sites[i];

		fmt_table_row(t);
		fmt_table_cell(t, "%s", s->call);
		if (s->file[0]) {
			/* the file's last component: the line must survive the column */
			const char *base = strrchr(s->file, '/');

			fmt_table_cell(t, "%s (%s:%u)", s->function, base ? base + 1 : s->file,
				       s->line);
		}
		else
			fmt_table_cell(t, "%s", s->function);
		fmt_table_cell(t, "%" PRIu64, s->calls);
		fmt_table_cell(t, "%s", util_fmt_time(b[0], sizeof(b[0]), s->time_ns));
		fmt_table_cell(t, "%s", util_fmt_time(b[1], sizeof(b[1]), s->wait_ns));
		fmt_table_cell(t, "%.2f", s->app_pct);
		fmt_table_cell(t, "%.2f", s->mpi_pct);
		fmt_table_cell(t, "%.2f", s->cov);
		fmt_table_cell(t, "%s", fmt_bytes(b[2], sizeof(b[2]), s->bytes));
	}
	fmt_table_print(t, out, FMT_RULES, 2);
	fmt_table_free(t);
}

static void coll_table(FILE *out, const struct dist_analysis *d)
{
	struct fmt_table *t;
	char b[4][32];
	size_t i;

	if (!d->ncolls)
		return;
	t = fmt_table_new();
	if (!t)
		return;
	fprintf(out, "\n  Collectives (matched across ranks; wait: from a rank's arrival to the "
		     "last one's):\n");
	fmt_table_col(t, "Call", FMT_LEFT, 0, 0);
	fmt_table_col(t, "Instances", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Unmatched", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Time", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Wait", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Transfer", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Bytes", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Last to arrive", FMT_LEFT, 0, 0);
	for (i = 0; i < d->ncolls; i++) {
		const struct dist_collective *c = &d->colls[i];

		fmt_table_row(t);
		fmt_table_cell(t, "%s", c->call);
		fmt_table_cell(t, "%" PRIu64, c->instances);
		fmt_table_cell(t, "%" PRIu64, c->unmatched);
		fmt_table_cell(t, "%s", util_fmt_time(b[0], sizeof(b[0]), c->time_ns));
		fmt_table_cell(t, "%s", util_fmt_time(b[1], sizeof(b[1]), c->wait_ns));
		fmt_table_cell(t, "%s", util_fmt_time(b[2], sizeof(b[2]), c->transfer_ns));
		fmt_table_cell(t, "%s", fmt_bytes(b[3], sizeof(b[3]), c->bytes));
		if (c->latest_rank >= 0)
			fmt_table_cell(t, "rank %d (%" PRIu64 "x)", c->latest_rank, c->latest_count);
		else
			fmt_table_cell(t, "-");
	}
	fmt_table_print(t, out, FMT_RULES, 2);
	fmt_table_free(t);
}

static void hist_table(FILE *out, const struct dist_analysis *d)
{
	struct fmt_table *t;
	char b[32];
	uint64_t le;
	size_t i;
	unsigned k;

	if (!d->nhists)
		return;
	t = fmt_table_new();
	if (!t)
		return;
	fprintf(out, "\n  Message sizes (calls by bytes sent + received, upper bound of each "
		     "bin):\n");
	fmt_table_col(t, "Call", FMT_LEFT, 0, 0);
	for (k = 0, le = 64; k < DIST_HIST_BINS; k++, le *= 4) {
		if (k + 1 < DIST_HIST_BINS)
			fmt_bytes(b, sizeof(b), le);
		else
			snprintf(b, sizeof(b), "more");
		fmt_table_col(t, b, FMT_RIGHT, 0, 0);
	}
	for (i = 0; i < d->nhists; i++) {
		fmt_table_row(t);
		fmt_table_cell(t, "%s", d->hists[i].call);
		for (k = 0; k < DIST_HIST_BINS; k++)
			fmt_table_cell(t, "%" PRIu64, d->hists[i].count[k]);
	}
	fmt_table_print(t, out, FMT_RULES, 2);
	fmt_table_free(t);
}

int report_dist_text(FILE *out, const struct analysis *a, const struct report_opts *o)
{
	const struct dist_analysis *d = a->dist;
	char b[3][32];

	if (!d || !d->nranks)
		return 0;
	fprintf(out, "\nDistributed run: %zu rank%s found", d->nranks, d->nranks == 1 ? "" : "s");
	if (d->world_size)
		fprintf(out, " of world size %d", d->world_size);
	if (d->world_size && d->selected < (size_t)d->world_size)
		fprintf(out, " (%zu selected by --ranks%s", d->selected, d->missing ? "" : ")");
	if (d->missing)
		fprintf(out, "%s%zu missing)",
			d->world_size && d->selected < (size_t)d->world_size ? ", " : " (", d->missing);
	fprintf(out, ", MPI: %s, ", d->mpi[0] ? d->mpi : (d->nsites ? "yes" : "none recorded"));
	clock_line(out, d);
	fputc('\n', out);
	fprintf(out, "  MPI time %s of %s rank wall (%s)\n",
		util_fmt_time(b[0], sizeof(b[0]), d->mpi_ns),
		util_fmt_time(b[1], sizeof(b[1]), d->app_ns),
		fmt_pct(b[2], sizeof(b[2]), (double)d->mpi_ns, (double)d->app_ns));
	rank_table(out, d);
	straggler_line(out, d);
	split_table(out, d);
	site_table(out, d, o && o->limit ? o->limit : 10);
	coll_table(out, d);
	hist_table(out, d);
	if (d->nfindings)
		fmt_recos(out, "Distributed recommendations", d->findings, d->nfindings);
	return ferror(out) ? -EIO : 0;
}
