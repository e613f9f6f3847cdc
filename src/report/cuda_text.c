/*
 * cuda_text.c — the CUDA part of the text report: status lines, the
 * autograd-style table, nsys-style kernel / memop / API summaries, launch
 * sites, the overview with its formulas, and the recommendations.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_analysis.h"
#include "analysis.h"
#include "cuda_report.h"
#include "fmt.h"
#include "util.h"
#include "names.h"
#include "occupancy.h"

#define CUDA_TEXT_NAME_MAX 55      /* torch's max_name_column_width */
#define CUDA_TEXT_KNAME_MAX 80     /* kernel names in the nsys-style tables */

/* -q: tables only; the legends (formulas) are hints. */
static int quiet(const struct report_opts *o)
{
	return o && o->quiet;
}

static void print_status(FILE *out, const struct cuda_analysis *a)
{
	/* one line for what many processes said alike (17 fork children) */
	fmt_lines_folded(out, "", a->status_lines, a->nstatus_lines);
	if (a->nstatus_lines)
		fputc('\n', out);
}

const char *report_cuda_sorted_ops(const struct cuda_analysis *a, const char *key,
				   struct cuda_op_row **ops)
{
	struct cuda_analysis view = *a;
	const char *used;

	view.ops = malloc((a->nops ? a->nops : 1) * sizeof(*view.ops));
	if (!view.ops)
		return NULL;
	if (a->nops) /* memcpy's source must not be NULL, even for 0 bytes */
		memcpy(view.ops, a->ops, a->nops * sizeof(*view.ops));
	used = cuda_sort_ops(&view, key);
	*ops = view.ops;
	return used;
}

/* Net bytes, signed, in fmt_bytes' units ("-8.0 MiB"); "0 B" for nothing. */
static char *mem_bytes(char *buf, size_t len, double bytes)
{
	double mag = bytes < 0 ? -bytes : bytes;
	char tmp[32];

	fmt_bytes(tmp, sizeof(tmp), (uint64_t)(mag + 0.5));
	snprintf(buf, len, "%s%s", bytes <= -0.5 ? "-" : "", tmp);
	return buf;
}

static int print_ops(FILE *out, const struct cuda_analysis *a, const struct report_opts *o)
{
	struct cuda_op_row *ops = NULL;
	const char *key = report_cuda_sorted_ops(a, o ? o->sort : NULL, &ops);
	struct fmt_table *t = key ? fmt_table_new() : NULL;
	int dev = a->self_cuda_total_ns > 0;
	double self_cpu = (double)a->self_cpu_total_ns;
	size_t i, n = report_limit(o, a->nops);
	char b[64];

	if (!t) {
		free(ops);
		return -ENOMEM;
	}
	fprintf(out, "CUDA ops, autograd-style (sorted by %s)\n", key);
	fmt_table_col(t, "Name", FMT_RIGHT, 4, CUDA_TEXT_NAME_MAX);
	fmt_table_col(t, "Self CPU %", FMT_RIGHT, 12, 0);
	fmt_table_col(t, "Self CPU", FMT_RIGHT, 12, 0);
	fmt_table_col(t, "CPU total %", FMT_RIGHT, 12, 0);
	fmt_table_col(t, "CPU total", FMT_RIGHT, 12, 0);
	fmt_table_col(t, "CPU time avg", FMT_RIGHT, 12, 0);
	if (dev) {
		/* torch puts the % after the time for the device block */
		fmt_table_col(t, "Self CUDA", FMT_RIGHT, 12, 0);
		fmt_table_col(t, "Self CUDA %", FMT_RIGHT, 12, 0);
		fmt_table_col(t, "CUDA total", FMT_RIGHT, 12, 0);
		fmt_table_col(t, "CUDA time avg", FMT_RIGHT, 12, 0);
	}
	if (a->has_mem) {
		/* torch's profile_memory columns, before the call count as there */
		fmt_table_col(t, "CPU Mem", FMT_RIGHT, 12, 0);
		fmt_table_col(t, "Self CPU Mem", FMT_RIGHT, 12, 0);
		fmt_table_col(t, "CUDA Mem", FMT_RIGHT, 12, 0);
		fmt_table_col(t, "Self CUDA Mem", FMT_RIGHT, 12, 0);
	}
	fmt_table_col(t, "# of Calls", FMT_RIGHT, 12, 0);
	for (i = 0; i < n; i++) {
		const struct cuda_op_row *r = &ops[i];
		double calls = r->calls ? (double)r->calls : 1;

		fmt_table_row(t);
		fmt_table_cell(t, "%s", r->display ? r->display : r->name);
		fmt_table_cell(t, "%s", fmt_pct(b, sizeof(b), (double)r->self_cpu_ns, self_cpu));
		fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), r->self_cpu_ns));
		fmt_table_cell(t, "%s", fmt_pct(b, sizeof(b), (double)r->cpu_total_ns, self_cpu));
		fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), r->cpu_total_ns));
		fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), r->cpu_total_ns / calls));
		if (dev) {
			fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), r->self_cuda_ns));
			fmt_table_cell(t, "%s", fmt_pct(b, sizeof(b), (double)r->self_cuda_ns,
							(double)a->self_cuda_total_ns));
			fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), r->cuda_total_ns));
			fmt_table_cell(t, "%s",
				       util_fmt_time(b, sizeof(b), r->cuda_total_ns / calls));
		}
		if (a->has_mem) {
			fmt_table_cell(t, "%s", mem_bytes(b, sizeof(b), r->cpu_mem));
			fmt_table_cell(t, "%s", mem_bytes(b, sizeof(b), r->self_cpu_mem));
			fmt_table_cell(t, "%s", mem_bytes(b, sizeof(b), (double)r->cuda_mem));
			fmt_table_cell(t, "%s", mem_bytes(b, sizeof(b), (double)r->self_cuda_mem));
		}
		fmt_table_cell(t, "%" PRIu64, r->calls);
	}
	fmt_table_print(t, out, FMT_RULES, 0);
	fmt_table_free(t);
	free(ops);
	fprintf(out, "Self CPU time total: %s\n",
		util_fmt_time(b, sizeof(b), a->self_cpu_total_ns));
	if (dev)
		fprintf(out, "Self CUDA time total: %s\n",
			util_fmt_time(b, sizeof(b), a->self_cuda_total_ns));
	fmt_more(out, n, a->nops, "rows", 0, 0, NULL);
	fputc('\n', out);
	return 0;
}

static void stats_cells(struct fmt_table *t, const struct cuda_stats *s)
{
	char b[64];

	fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), s->avg));
	fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), s->med));
	fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), (double)s->min));
	fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), (double)s->max));
	fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), s->stddev));
}

static int print_kernels(FILE *out, const struct cuda_analysis *a, const struct report_opts *o)
{
	struct fmt_table *t;
	size_t i, n = report_limit(o, a->nkernels);
	int varies = 0;
	char b[64];

	if (!a->nkernels)
		return 0;
	t = fmt_table_new();
	if (!t)
		return -ENOMEM;
	fprintf(out, "CUDA GPU kernel summary (cuda_gpu_kern_sum)\n");
	fmt_table_col(t, "Time %", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Total", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Instances", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Avg", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Med", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Min", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Max", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "StdDev", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Grid", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Block", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Regs", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "SMem", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Blocks/SM", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Est. Occ.", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Name", FMT_LEFT, 0, CUDA_TEXT_KNAME_MAX);
	for (i = 0; i < n; i++) {
		const struct cuda_kernel_row *k = &a->kernels[i];
		const char *mark = k->config_varies ? "*" : "";

		varies |= k->config_varies;
		fmt_table_row(t);
		fmt_table_cell(t, "%.2f%%", k->time_pct);
		fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), k->t.total));
		fmt_table_cell(t, "%" PRIu64, k->t.count);
		stats_cells(t, &k->t);
		fmt_table_cell(t, "%dx%dx%d%s", k->grid[0], k->grid[1], k->grid[2], mark);
		fmt_table_cell(t, "%dx%dx%d%s", k->block[0], k->block[1], k->block[2], mark);
		fmt_table_cell(t, "%u", k->registers);
		fmt_table_cell(t, "%d+%d", k->static_smem, k->dynamic_smem);
		if (k->blocks_per_sm >= 0)
			fmt_table_cell(t, "%.2f", k->blocks_per_sm);
		else
			fmt_table_cell(t, "-");
		if (k->est_occupancy >= 0)
			fmt_table_cell(t, "%.1f%%", 100 * k->est_occupancy);
		else
			fmt_table_cell(t, "-");
		fmt_table_cell(t, "%s", k->display ? k->display : k->name);
	}
	fmt_table_print(t, out, FMT_PLAIN, 1);
	fmt_table_free(t);
	{
		double rest = 0;

		for (i = n; i < a->nkernels; i++)
			rest += a->kernels[i].time_pct;
		fmt_more(out, n, a->nkernels, "kernels", rest, 100.0, "the kernel time"); /* shares in % */
	}
	if (!quiet(o))
		fprintf(out, "  SMem = static+dynamic shared memory per block; Blocks/SM = grid blocks / SMs; "
			     "Est. Occ. = min(active blocks/SM, Blocks/SM) x block size / max threads per SM\n"
			     "  (both duration-weighted means%s%s)\n",
			varies ? "; * = launch configuration varies, first instance shown" : "",
			occ_available() ? "" : "; Est. Occ. needs cuda_occupancy.h at build time");
	fputc('\n', out);
	return 0;
}

static void memop_sub(struct fmt_table *t, const char *what, uint64_t n, uint64_t ns,
		      uint64_t bytes, uint64_t all)
{
	char b[64];

	fmt_table_row(t);
	fmt_table_cell(t, "%s", fmt_pct(b, sizeof(b), (double)ns, (double)all));
	fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), ns));
	fmt_table_cell(t, "%" PRIu64, n);
	fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), n ? (double)ns / n : 0));
	fmt_table_cell(t, "-");
	fmt_table_cell(t, "-");
	fmt_table_cell(t, "%s", fmt_bytes(b, sizeof(b), bytes));
	if (ns)
		fmt_table_cell(t, "%s", util_fmt_rate(b, sizeof(b), (double)bytes * 1e9 / (double)ns));
	else
		fmt_table_cell(t, "-");
	fmt_table_cell(t, "  %s", what);
}

static int print_memops(FILE *out, const struct cuda_analysis *a, const struct report_opts *o)
{
	struct fmt_table *t;
	size_t i, n = report_limit(o, a->nmemops);
	uint64_t all = a->totals.memcpy_ns + a->totals.memset_ns;
	char b[64];

	if (!a->nmemops)
		return 0;
	t = fmt_table_new();
	if (!t)
		return -ENOMEM;
	fprintf(out, "CUDA GPU memory operations (cuda_gpu_mem_time_sum + cuda_gpu_mem_size_sum)\n");
	fmt_table_col(t, "Time %", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Total", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Count", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Avg", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Min", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Max", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Bytes", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Throughput", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Operation", FMT_LEFT, 0, 0);
	for (i = 0; i < n; i++) {
		const struct cuda_memop_row *r = &a->memops[i];

		fmt_table_row(t);
		fmt_table_cell(t, "%.2f%%", r->time_pct);
		fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), r->t.total));
		fmt_table_cell(t, "%" PRIu64, r->t.count);
		fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), r->t.avg));
		fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), (double)r->t.min));
		fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), (double)r->t.max));
		fmt_table_cell(t, "%s", fmt_bytes(b, sizeof(b), r->bytes));
		if (r->t.total)
			fmt_table_cell(t, "%s", util_fmt_rate(b, sizeof(b), (double)r->bytes * 1e9 /
									(double)r->t.total));
		else
			fmt_table_cell(t, "-");
		fmt_table_cell(t, "%s", r->name);
		if (r->pageable)
			memop_sub(t, "from/to pageable host memory", r->pageable, r->pageable_ns,
				  r->pageable_bytes, all);
		if (r->pinned)
			memop_sub(t, "from/to pinned host memory", r->pinned, r->pinned_ns, r->pinned_bytes,
				  all);
	}
	fmt_table_print(t, out, FMT_PLAIN, 1);
	fmt_table_free(t);
	{
		double rest = 0;

		for (i = n; i < a->nmemops; i++)
			rest += a->memops[i].time_pct;
		fmt_more(out, n, a->nmemops, "operations", rest, 100.0, "the copy and set time"); /* shares in % */
	}
	if (!quiet(o))
		fprintf(out, "  Throughput = bytes / GPU time (GiB/s = 2^30 bytes/s)\n");
	fputc('\n', out);
	return 0;
}

static int print_api(FILE *out, const struct cuda_analysis *a, const struct report_opts *o)
{
	struct fmt_table *t;
	size_t i, n = report_limit(o, a->napi);
	char b[64];

	if (!a->napi)
		return 0;
	t = fmt_table_new();
	if (!t)
		return -ENOMEM;
	fprintf(out, "CUDA API summary (cuda_api_sum)\n");
	fmt_table_col(t, "Time %", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Total", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Num Calls", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Avg", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Med", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Min", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Max", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "StdDev", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Name", FMT_LEFT, 0, CUDA_TEXT_KNAME_MAX);
	for (i = 0; i < n; i++) {
		const struct cuda_api_row *r = &a->api[i];

		fmt_table_row(t);
		fmt_table_cell(t, "%.2f%%", r->time_pct);
		fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), r->t.total));
		fmt_table_cell(t, "%" PRIu64, r->t.count);
		stats_cells(t, &r->t);
		fmt_table_cell(t, "%s", r->name);
	}
	fmt_table_print(t, out, FMT_PLAIN, 1);
	fmt_table_free(t);
	{
		double rest = 0;

		for (i = n; i < a->napi; i++)
			rest += a->api[i].time_pct;
		fmt_more(out, n, a->napi, "API functions", rest, 100.0, "the API time"); /* shares in % */
	}
	fputc('\n', out);
	return 0;
}

static int print_sites(FILE *out, const struct cuda_analysis *a, const struct report_opts *o)
{
	struct fmt_table *t;
	size_t i, n = report_limit(o, a->nsites);
	uint64_t all = a->ov.gpu_ns;
	char b[64], f[512], name[512];
	int has_op = 0;

	/* nothing to say when no launch had a host stack */
	if (!a->nsites || (a->nsites == 1 && !strcmp(a->sites[0].function, "[no stack captured]")))
		return 0;
	t = fmt_table_new();
	if (!t)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		has_op |= a->sites[i].op && *a->sites[i].op;
	fprintf(out, "CUDA launch sites (first frame of the user's code: past the CUDA runtime, "
		     "vendor libraries and frameworks)\n");
	fmt_table_col(t, "Launches", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "GPU time", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "GPU %", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "Avg/launch", FMT_RIGHT, 0, 0);
	fmt_table_col(t, "filename:lineno(function)", FMT_LEFT | FMT_CUT_LEFT, 0, 72);
	if (has_op)
		fmt_table_col(t, "Operator", FMT_LEFT, 0, 40);
	fmt_table_col(t, "Kernel (most GPU time)", FMT_LEFT, 0, CUDA_NAME_WIDTH + 12);
	for (i = 0; i < n; i++) {
		const struct cuda_site *s = &a->sites[i];

		fmt_table_row(t);
		fmt_table_cell(t, "%" PRIu64, s->launches);
		fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), s->gpu_ns));
		fmt_table_cell(t, "%s", fmt_pct(b, sizeof(b), (double)s->gpu_ns, (double)all));
		fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), s->launches ?
						      (double)s->gpu_ns / s->launches : 0));
		if (s->function[0] == '[')
			fmt_table_cell(t, "%s", s->function);
		else
			fmt_table_cell(t, "%s", fmt_func(f, sizeof(f),
							 names_bare_copy(name, sizeof(name), s->function),
							 fmt_rel_path(s->file), s->line, s->module));
		if (has_op)
			fmt_table_cell(t, "%s", s->op && *s->op ? s->op : "-");
		if (!s->kernel_display)
			fmt_table_cell(t, "-");
		else if (s->kernels > 1)
			fmt_table_cell(t, "%s (+%" PRIu64 " more)", s->kernel_display, s->kernels - 1);
		else
			fmt_table_cell(t, "%s", s->kernel_display);
	}
	fmt_table_print(t, out, FMT_PLAIN, 1);
	fmt_table_free(t);
	{
		uint64_t rest = 0, all = 0;

		for (i = 0; i < a->nsites; i++) {
			all += a->sites[i].gpu_ns;
			if (i >= n)
				rest += a->sites[i].gpu_ns;
		}
		fmt_more(out, n, a->nsites, "sites", (double)rest, (double)all, "the GPU time");
	}
	fputc('\n', out);
	return 0;
}

static char *pct_or_dash(char *b, size_t n, double v)
{
	if (v < 0)
		snprintf(b, n, "-");
	else
		snprintf(b, n, "%.2f%%", 100 * v);
	return b;
}

static void ov_line(FILE *out, int q, const char *label, const char *value, const char *formula)
{
	if (q)
		fprintf(out, "  %-26s %s\n", label, value);
	else
		fprintf(out, "  %-26s %-26s %s\n", label, value, formula);
}

static void print_overview(FILE *out, const struct cuda_analysis *a, const struct profile *p,
			   const struct report_opts *o)
{
	const struct cuda_overview *ov = &a->ov;
	uint64_t wall = p->wall_ns ? p->wall_ns : ov->window_ns;
	char b1[64], b2[64], v[160], f[160];
	int q = quiet(o);

	if (!ov->ndevices) {
		/* API calls but no GPU work: nothing to measure on the GPU side */
		fprintf(out, "CUDA overview\n  %-26s %s\n", "Verdict",
			"idle (no kernel, copy or set was recorded)");
		if (ov->sync_blocked_ns)
			fprintf(out, "  %-26s %s\n", "CPU blocked in sync",
				util_fmt_time(b1, sizeof(b1), ov->sync_blocked_ns));
		fputc('\n', out);
		return;
	}
	fprintf(out, "CUDA overview (window: first to last GPU activity, %s, %u device%s)\n",
		util_fmt_time(b1, sizeof(b1), ov->window_ns), ov->ndevices,
		ov->ndevices == 1 ? "" : "s");
	ov_line(out, q, "GPU utilization", pct_or_dash(v, sizeof(v), ov->gpu_utilization),
		"= |union of kernel intervals| / window, mean over devices");
	ov_line(out, q, "Est. SM efficiency", pct_or_dash(v, sizeof(v), ov->est_sm_efficiency),
		"= integral of min(sum of Blocks/SM of running kernels, 1) dt / window");
	ov_line(out, q, "Est. achieved occupancy", pct_or_dash(v, sizeof(v), ov->est_achieved_occupancy),
		"= sum(Est. Occ. x duration) / sum(duration) over kernels");
	snprintf(v, sizeof(v), "%s / %s", util_fmt_time(b1, sizeof(b1), ov->cpu_ns),
		 util_fmt_time(b2, sizeof(b2), ov->gpu_ns));
	ov_line(out, q, "CPU time / GPU time", v,
		"= sampled CPU time of all processes / sum of kernel, copy and set durations");
	snprintf(v, sizeof(v), "%s (%.1f%% of wall)",
		 util_fmt_time(b1, sizeof(b1), ov->sync_blocked_ns),
		 wall ? 100.0 * ov->sync_blocked_ns / wall : 0.0);
	ov_line(out, q, "CPU blocked in sync", v,
		"= time inside synchronizing calls (cudaDeviceSynchronize, sync cudaMemcpy, ...)");
	snprintf(v, sizeof(v), "%s in %" PRIu64 " gaps",
		 util_fmt_time(b1, sizeof(b1), ov->idle_gaps_ns), ov->ngaps);
	snprintf(f, sizeof(f), "= time between GPU activities on a device; largest %s",
		 util_fmt_time(b2, sizeof(b2), ov->largest_gap_ns));
	if (q)
		snprintf(v + strlen(v), sizeof(v) - strlen(v), ", largest %s", b2);
	ov_line(out, q, "GPU idle gaps", v, f);
	if (a->ndevices > 1)
		for (size_t i = 0; i < a->ndevices; i++) {
			char lab[48];

			snprintf(lab, sizeof(lab), "  device %u", a->devices[i].device);
			snprintf(v, sizeof(v), "utilization %s, Est. SM efficiency %s",
				 pct_or_dash(b1, sizeof(b1), a->devices[i].utilization),
				 pct_or_dash(b2, sizeof(b2), a->devices[i].est_sm_efficiency));
			fprintf(out, "  %-26s %s\n", lab, v);
		}
	fprintf(out, "  %-26s %s\n", "Verdict", ov->verdict);
	if (!q)
		fprintf(out, "  (idle = no GPU work; compute-bound = utilization >= %.0f%%; overhead-bound = "
			     "utilization < %.0f%% and non-sync API time >= %.0f%% of the window\n"
			     "   or >= %d kernels with a median < %.0f us; mixed otherwise)\n",
			100 * CUDA_VERDICT_COMPUTE_UTIL, 100 * CUDA_VERDICT_OVERHEAD_UTIL,
			100 * CUDA_OVERHEAD_API_FRACTION, CUDA_OVERHEAD_MIN_KERNELS,
			CUDA_OVERHEAD_SHORT_KERNEL_NS / 1e3);
	fputc('\n', out);
}

int report_cuda_text(FILE *out, const struct analysis *an, const struct report_opts *o)
{
	const struct cuda_analysis *a = an->cuda;
	const struct profile *p = an->profile;
	int ret = 0;

	if (!a)
		return 0;
	print_status(out, a);
	if (a->has_data) {
		if ((ret = print_ops(out, a, o)) || (ret = print_kernels(out, a, o)) ||
		    (ret = print_memops(out, a, o)) || (ret = print_api(out, a, o)) ||
		    (ret = print_sites(out, a, o)))
			goto out;
		print_overview(out, a, p, o);
		fmt_recos(out, "CUDA recommendations", a->recos, a->nrecos);
		if (a->nrecos)
			fputc('\n', out);
	}
out:
	return ret;
}
