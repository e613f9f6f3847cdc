/*
 * cuda_json.c — the "cuda" object of the JSON report (docs/report.schema.json):
 * status, totals, every autograd-style row, kernel / memop / API summaries,
 * launch sites, overview and recommendations.  All rows, never --limit'ed.
 */
#include <math.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "cuda_analysis.h"
#include "analysis.h"
#include "cuda_report.h"
#include "json_keys.h"
#include "json_put.h"
#include "names.h"

static const char *const row_kind[] = { "range", "api", "kernel", "memcpy", "memset" };

static void num_or_null(cJSON *o, const char *k, double v)
{
	if (v < 0)
		cJSON_AddNullToObject(o, k);
	else
		cJSON_AddNumberToObject(o, k, v);
}

static cJSON *dim3(const int32_t d[3])
{
	int v[3] = { d[0], d[1], d[2] };

	return cJSON_CreateIntArray(v, 3);
}

static void stats(cJSON *o, const struct cuda_stats *s)
{
	json_put_num(o, "avg_ns", s->avg);
	json_put_num(o, "med_ns", s->med);
	json_put_num(o, "min_ns", (double)s->min);
	json_put_num(o, "max_ns", (double)s->max);
	json_put_num(o, "stddev_ns", s->stddev);
}

static cJSON *arr(cJSON *parent, const char *k)
{
	return cJSON_AddArrayToObject(parent, k);
}

static cJSON *item(cJSON *array)
{
	cJSON *o = cJSON_CreateObject();

	if (o)
		cJSON_AddItemToArray(array, o);
	return o;
}

/* cJSON add-functions tolerate a NULL parent, so a failed allocation only
 * loses the part it concerns; the caller checks the result at the end. */
/* The status rows, the GPUs, the spans the program's own CUPTI client held
 * and the notes. */
static void build_status(cJSON *c, const struct cuda_analysis *a)
{
	cJSON *x, *o;
	size_t i;

	/* status[] holds what the CUDA layer recorded; a process inferred from
	 * its modules to have loaded CUDA without tracing it is a note, so
	 * status[] stays empty when the layer never ran. */
	x = arr(c, JK_STATUS);
	for (i = 0; i < a->nstatus; i++) {
		const struct cuda_status_row *s = &a->status[i];

		if (s->inferred)
			continue;
		if (!(o = item(x)))
			continue;
		json_put_num(o, JK_PID, s->pid);
		cJSON_AddStringToObject(o, JK_STATE, s->state);
		cJSON_AddStringToObject(o, JK_MESSAGE, s->message);
		json_put_num(o, "cupti_error", s->cupti_error);
		json_put_num(o, "dropped", (double)s->dropped);
		json_put_num(o, "zero_ts", (double)s->zero_ts);
		json_put_num(o, "flush_timed_out", s->flush_timed_out);
		cJSON_AddStringToObject(o, "exe", s->exe);
		if (*s->note)
			cJSON_AddStringToObject(o, "note", s->note);
	}

	/* The GPUs, each once (by UUID) with how many processes used it. */
	x = arr(c, "gpus");
	for (i = 0; i < a->ngpus; i++) {
		const struct cuda_gpu *g = &a->gpus[i];

		if (!(o = item(x)))
			continue;
		cJSON_AddStringToObject(o, "name", g->name);
		if (*g->uuid)
			cJSON_AddStringToObject(o, "uuid", g->uuid);
		else
			cJSON_AddNullToObject(o, "uuid");
		json_put_num(o, "device", g->id);
		json_put_num(o, "memory_bytes", (double)g->global_mem);
		json_put_num(o, "sm_count", g->sm_count);
		json_put_num(o, "compute_capability", g->cc_major + g->cc_minor / 10.0);
		json_put_num(o, "processes", g->processes);
	}

	/* Spans the program's own CUPTI client held (docs/cuda.md). */
	x = arr(c, "shared");
	for (i = 0; i < a->nshares; i++) {
		const struct cuda_share_row *s = &a->shares[i];

		if (!(o = item(x)))
			continue;
		json_put_num(o, JK_PID, s->pid);
		cJSON_AddStringToObject(o, "exe", s->exe);
		cJSON_AddStringToObject(o, "what", s->what);
		cJSON_AddStringToObject(o, "holder", s->holder);
		json_put_num(o, "start_ns", (double)s->start_ns);
		if (s->end_ns)
			json_put_num(o, "end_ns", (double)s->end_ns);
		else
			cJSON_AddNullToObject(o, "end_ns");
		cJSON_AddStringToObject(o, "note", s->note);
	}

	x = arr(c, "notes");
	for (i = 0; i < a->nstatus; i++)
		if (a->status[i].inferred)
			cJSON_AddItemToArray(x, cJSON_CreateString(a->status[i].text));
}

/* The totals and the autograd-style rows. */
static void build_ops(cJSON *c, const struct cuda_analysis *a, const struct cuda_op_row *ops)
{
	cJSON *x, *o;
	size_t i;

	o = cJSON_AddObjectToObject(c, JK_TOTALS);
	json_put_num(o, JK_KERNELS, (double)a->totals.kernels);
	json_put_num(o, JK_KERNEL_NS, (double)a->totals.kernel_ns);
	json_put_num(o, JK_MEMCPY, (double)a->totals.memcpy);
	json_put_num(o, JK_MEMCPY_NS, (double)a->totals.memcpy_ns);
	json_put_num(o, JK_MEMCPY_BYTES, (double)a->totals.memcpy_bytes);
	json_put_num(o, "memset", (double)a->totals.memset);
	json_put_num(o, "memset_ns", (double)a->totals.memset_ns);
	json_put_num(o, JK_API_CALLS, (double)a->totals.api_calls);
	json_put_num(o, "api_ns", (double)a->totals.api_ns);
	json_put_num(o, JK_SYNC_NS, (double)a->totals.sync_ns);
	json_put_num(o, JK_GPU_BUSY_NS, (double)a->totals.gpu_busy_ns);

	x = arr(c, "ops");
	for (i = 0; i < a->nops; i++) {
		const struct cuda_op_row *r = &ops[i];

		if (!(o = item(x)))
			continue;
		cJSON_AddStringToObject(o, "name", r->name);
		cJSON_AddStringToObject(o, "short_name", r->display ? r->display : r->name);
		cJSON_AddStringToObject(o, "kind", r->kind < 5 ? row_kind[r->kind] : "api");
		json_put_num(o, "self_cpu_ns", (double)r->self_cpu_ns);
		json_put_num(o, "cpu_total_ns", (double)r->cpu_total_ns);
		json_put_num(o, "self_cuda_ns", (double)r->self_cuda_ns);
		json_put_num(o, "cuda_total_ns", (double)r->cuda_total_ns);
		json_put_num(o, "calls", (double)r->calls);
		if (a->has_mem) {
			json_put_num(o, JK_CPU_MEM, round(r->cpu_mem));
			json_put_num(o, JK_SELF_CPU_MEM, round(r->self_cpu_mem));
			json_put_num(o, JK_CUDA_MEM, (double)r->cuda_mem);
			json_put_num(o, JK_SELF_CUDA_MEM, (double)r->self_cuda_mem);
		}
	}
}

/* The kernel, memory operation and API tables. */
static void build_tables(cJSON *c, const struct cuda_analysis *a)
{
	cJSON *x, *o;
	size_t i;

	x = arr(c, JK_KERNELS);
	for (i = 0; i < a->nkernels; i++) {
		const struct cuda_kernel_row *k = &a->kernels[i];

		if (!(o = item(x)))
			continue;
		cJSON_AddStringToObject(o, JK_NAME, k->name);
		cJSON_AddStringToObject(o, "short_name", k->display ? k->display : k->name);
		json_put_num(o, JK_INSTANCES, (double)k->t.count);
		json_put_num(o, JK_TOTAL_NS, (double)k->t.total);
		stats(o, &k->t);
		json_put_num(o, "time_pct", k->time_pct);
		cJSON_AddItemToObject(o, "grid", dim3(k->grid));
		cJSON_AddItemToObject(o, "block", dim3(k->block));
		json_put_num(o, "registers", k->registers);
		json_put_num(o, "static_smem", k->static_smem);
		json_put_num(o, "dynamic_smem", k->dynamic_smem);
		num_or_null(o, "blocks_per_sm", k->blocks_per_sm);
		num_or_null(o, "est_occupancy", k->est_occupancy);
		cJSON_AddBoolToObject(o, "config_varies", k->config_varies);
	}

	x = arr(c, "memops");
	for (i = 0; i < a->nmemops; i++) {
		const struct cuda_memop_row *r = &a->memops[i];

		if (!(o = item(x)))
			continue;
		cJSON_AddStringToObject(o, "name", r->name);
		cJSON_AddStringToObject(o, "kind", r->kind < 5 ? row_kind[r->kind] : "memcpy");
		json_put_num(o, "count", (double)r->t.count);
		json_put_num(o, "total_ns", (double)r->t.total);
		json_put_num(o, "bytes", (double)r->bytes);
		json_put_num(o, "avg_ns", r->t.avg);
		json_put_num(o, "min_ns", (double)r->t.min);
		json_put_num(o, "max_ns", (double)r->t.max);
		json_put_num(o, "pinned", (double)r->pinned);
		json_put_num(o, "pageable", (double)r->pageable);
		json_put_num(o, "pinned_ns", (double)r->pinned_ns);
		json_put_num(o, "pageable_ns", (double)r->pageable_ns);
		json_put_num(o, "pinned_bytes", (double)r->pinned_bytes);
		json_put_num(o, "pageable_bytes", (double)r->pageable_bytes);
	}

	x = arr(c, JK_API);
	for (i = 0; i < a->napi; i++) {
		const struct cuda_api_row *r = &a->api[i];

		if (!(o = item(x)))
			continue;
		cJSON_AddStringToObject(o, JK_NAME, r->name);
		json_put_num(o, JK_CALLS, (double)r->t.count);
		json_put_num(o, JK_TOTAL_NS, (double)r->t.total);
		stats(o, &r->t);
		json_put_num(o, "time_pct", r->time_pct);
	}
}

/* The launch sites. */
static void build_sites(cJSON *c, const struct cuda_analysis *a)
{
	cJSON *x = arr(c, "launch_sites"), *o;
	size_t i;

	for (i = 0; i < a->nsites; i++) {
		const struct cuda_site *s = &a->sites[i];
		char bare[1024];

		if (!(o = item(x)))
			continue;
		cJSON_AddStringToObject(o, "function", s->function);
		cJSON_AddStringToObject(o, "short_name", names_bare_copy(bare, sizeof(bare), s->function));
		cJSON_AddStringToObject(o, "file", s->file);
		json_put_num(o, "line", s->line);
		cJSON_AddStringToObject(o, "module", s->module);
		json_put_num(o, "launches", (double)s->launches);
		json_put_num(o, "gpu_ns", (double)s->gpu_ns);
		cJSON_AddStringToObject(o, "op", s->op ? s->op : "");
		cJSON_AddStringToObject(o, "kernel", s->kernel ? s->kernel : "");
		cJSON_AddStringToObject(o, "kernel_short_name",
					s->kernel_display ? s->kernel_display : "");
		json_put_num(o, "kernel_ns", (double)s->kernel_ns);
		json_put_num(o, "kernels", (double)s->kernels);
	}
}

/* The overview, per device, and the recommendations. */
static void build_overview(cJSON *c, const struct cuda_analysis *a)
{
	cJSON *x, *o;
	size_t i;

	o = cJSON_AddObjectToObject(c, JK_OVERVIEW);
	num_or_null(o, JK_GPU_UTILIZATION, a->ov.gpu_utilization);
	num_or_null(o, "est_sm_efficiency", a->ov.est_sm_efficiency);
	num_or_null(o, "est_achieved_occupancy", a->ov.est_achieved_occupancy);
	json_put_num(o, "cpu_ns", (double)a->ov.cpu_ns);
	json_put_num(o, "gpu_ns", (double)a->ov.gpu_ns);
	cJSON_AddStringToObject(o, "verdict", a->ov.verdict ? a->ov.verdict : "idle");
	json_put_num(o, "sync_blocked_ns", (double)a->ov.sync_blocked_ns);
	json_put_num(o, "gpu_idle_gaps_ns", (double)a->ov.idle_gaps_ns);
	json_put_num(o, "largest_gap_ns", (double)a->ov.largest_gap_ns);
	json_put_num(o, "window_ns", (double)a->ov.window_ns);
	json_put_num(o, "launch_api_ns", (double)a->ov.launch_api_ns);
	x = arr(o, "devices");
	for (i = 0; i < a->ndevices; i++) {
		cJSON *d = item(x);

		if (!d)
			continue;
		json_put_num(d, "device", a->devices[i].device);
		num_or_null(d, "gpu_utilization", a->devices[i].utilization);
		num_or_null(d, "est_sm_efficiency", a->devices[i].est_sm_efficiency);
		json_put_num(d, "busy_ns", (double)a->devices[i].busy_ns);
	}

	x = arr(c, "recommendations");
	for (i = 0; i < a->nrecos; i++) {
		if (!(o = item(x)))
			continue;
		cJSON_AddStringToObject(o, "id", a->recos[i].id);
		cJSON_AddStringToObject(o, "message", a->recos[i].message);
		cJSON_AddStringToObject(o, "evidence", a->recos[i].evidence);
	}
}

static void build(cJSON *c, const struct cuda_analysis *a, const struct cuda_op_row *ops)
{
	build_status(c, a);
	build_ops(c, a, ops);
	build_tables(c, a);
	build_sites(c, a);
	build_overview(c, a);
}

struct cJSON *report_cuda_json(const struct analysis *an, const struct report_opts *o)
{
	const struct cuda_analysis *a = an->cuda;
	struct cuda_op_row *ops = NULL;
	cJSON *c;

	if (!a)
		return NULL;
	/* ops in the order the text table uses, so --sort means the same */
	if (!report_cuda_sorted_ops(a, o ? o->sort : NULL, &ops))
		return NULL;
	c = cJSON_CreateObject();
	if (c)
		build(c, a, ops);
	free(ops);
	return c;
}
