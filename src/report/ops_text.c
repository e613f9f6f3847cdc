/*
 * ops_text.c — the operator table of the text report: torch.profiler's
 * key_averages().table() columns from sampled CPU time and exact GPU time
 * (docs/reading-the-report.md, "Python and PyTorch programs").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "fmt.h"
#include "ops.h"
#include "ops_report.h"
#include "util.h"

#define OPS_TEXT_NAME_MAX 55       /* torch's max_name_column_width */

const char *report_ops_sorted(const struct op_analysis *ops, const char *key,
			      struct op_row **rows)
{
	int has_gpu = 0;
	size_t i;

	*rows = malloc((ops->nrows ? ops->nrows : 1) * sizeof(**rows));
	if (!*rows)
		return NULL;
	for (i = 0; i < ops->nrows; i++) {
		(*rows)[i] = ops->rows[i];
		has_gpu |= ops->rows[i].cuda_total_ns > 0;
	}
	return ops_sort(*rows, ops->nrows, key, has_gpu);
}

const char *report_frame_name(const struct op_analysis *ops, uint32_t func, const char *name)
{
	if (ops && ops->func_op[func] != OPS_NONE)
		return ops->rows[ops->func_op[func]].name;
	return name;
}

int report_ops_text(FILE *out, const struct analysis *a, const struct report_opts *o)
{
	const struct op_analysis *ops = a->ops;
	struct op_row *rows = NULL;
	struct fmt_table *t;
	const char *key;
	double self_cpu;
	size_t i, n;
	int gpu;
	char b[64], b2[64], b3[64];

	if (!ops || !ops->nrows)
		return 0;
	key = report_ops_sorted(ops, o ? o->sort : NULL, &rows);
	t = key ? fmt_table_new() : NULL;
	if (!t) {
		free(rows);
		return -ENOMEM;
	}
	n = report_limit(o, ops->nrows);
	gpu = ops->gpu_ns > 0;
	self_cpu = (double)ops->self_cpu_total_ns;
	fprintf(out, "Operators, autograd-style (sorted by %s; CPU: sampled on-CPU time, "
		     "CUDA: exact GPU time)\n", key);
	fmt_table_col(t, "Name", FMT_RIGHT, 4, OPS_TEXT_NAME_MAX);
	fmt_table_col(t, "Self CPU %", FMT_RIGHT, 12, 0);
	fmt_table_col(t, "Sampled self CPU", FMT_RIGHT, 12, 0);
	fmt_table_col(t, "CPU total %", FMT_RIGHT, 12, 0);
	fmt_table_col(t, "Sampled CPU total", FMT_RIGHT, 12, 0);
	if (gpu) {
		fmt_table_col(t, "Self CUDA", FMT_RIGHT, 12, 0);
		fmt_table_col(t, "Self CUDA %", FMT_RIGHT, 12, 0);
		fmt_table_col(t, "CUDA total", FMT_RIGHT, 12, 0);
		fmt_table_col(t, "Launches", FMT_RIGHT, 12, 0);
	}
	for (i = 0; i < n; i++) {
		const struct op_row *r = &rows[i];

		fmt_table_row(t);
		fmt_table_cell(t, "%s", r->name);
		fmt_table_cell(t, "%s", fmt_pct(b, sizeof(b), (double)r->self_cpu_ns, self_cpu));
		fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), r->self_cpu_ns));
		fmt_table_cell(t, "%s", fmt_pct(b, sizeof(b), (double)r->cpu_total_ns, self_cpu));
		fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), r->cpu_total_ns));
		if (gpu) {
			fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), r->self_cuda_ns));
			fmt_table_cell(t, "%s", fmt_pct(b, sizeof(b), (double)r->self_cuda_ns,
							(double)ops->gpu_ns));
			fmt_table_cell(t, "%s", util_fmt_time(b, sizeof(b), r->cuda_total_ns));
			fmt_table_cell(t, "%" PRIu64, r->launches);
		}
	}
	fmt_table_print(t, out, FMT_RULES, 0);
	fmt_table_free(t);
	free(rows);
	fprintf(out, "Self CPU time total: %s (sampled; %s of the run's %s of sampled CPU)\n",
		util_fmt_time(b, sizeof(b), ops->self_cpu_total_ns),
		fmt_pct(b2, sizeof(b2), (double)ops->self_cpu_total_ns, (double)ops->cpu_ns),
		util_fmt_time(b3, sizeof(b3), ops->cpu_ns));
	if (gpu)
		fprintf(out, "Self CUDA time total: %s (%s of the run's %s of GPU time)\n",
			util_fmt_time(b, sizeof(b), ops->self_cuda_total_ns),
			fmt_pct(b2, sizeof(b2), (double)ops->self_cuda_total_ns, (double)ops->gpu_ns),
			util_fmt_time(b3, sizeof(b3), ops->gpu_ns));
	fmt_more(out, n, ops->nrows, "operators", 0, 0, NULL);
	if (!(o && o->quiet))
		fprintf(out, "  Sampled: on-CPU time of the samples whose stack holds the operator "
			     "(innermost: self; anywhere: total), not\n"
			     "  torch.profiler's wall time per call, which also counts waits; CUDA: "
			     "the kernels, copies and sets\n"
			     "  its launches started (innermost operator: self; anywhere: total); "
			     "Launches: API calls that launched\n"
			     "  GPU work inside it (calls themselves are not counted by sampling)\n");
	fputc('\n', out);
	return 0;
}
