/*
 * ops_json.c — the JSON report's "operators" object (docs/report.schema.json):
 * every operator, in the --sort order, with sampled CPU, exact GPU time,
 * launches, the entry function's full signature and the operators it was
 * seen nested in.
 */
#include <errno.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "analysis.h"
#include "json_keys.h"
#include "json_put.h"
#include "ops.h"
#include "ops_report.h"

int report_ops_json(const struct analysis *a, const struct report_opts *o, cJSON *root)
{
	const struct op_analysis *ops = a->ops;
	struct op_row *rows = NULL;
	const char *key;
	cJSON *obj, *arr;
	size_t i, k;

	if (!ops || !ops->nrows)
		return 0;
	key = report_ops_sorted(ops, o ? o->sort : NULL, &rows);
	obj = key ? cJSON_AddObjectToObject(root, JK_OPERATORS) : NULL;
	if (!obj) {
		free(rows);
		return -ENOMEM;
	}
	cJSON_AddStringToObject(obj, "sort", key);
	json_put_num(obj, "self_cpu_total_ns", (double)ops->self_cpu_total_ns);
	json_put_num(obj, JK_CPU_NS, (double)ops->cpu_ns);
	json_put_num(obj, "self_cuda_total_ns", (double)ops->self_cuda_total_ns);
	json_put_num(obj, "gpu_ns", (double)ops->gpu_ns);
	json_put_num(obj, "launches", (double)ops->launches);
	arr = cJSON_AddArrayToObject(obj, JK_OP_ROWS);
	for (i = 0; arr && i < ops->nrows; i++) {
		const struct op_row *r = &rows[i];
		cJSON *x = cJSON_CreateObject(), *par;

		if (!x)
			break;
		cJSON_AddItemToArray(arr, x);
		cJSON_AddStringToObject(x, JK_NAME, r->name);
		cJSON_AddStringToObject(x, "framework", r->framework);
		cJSON_AddStringToObject(x, "entry", r->entry ? r->entry : "");
		json_put_num(x, JK_OP_SELF_CPU_NS, (double)r->self_cpu_ns);
		json_put_num(x, JK_OP_CPU_TOTAL_NS, (double)r->cpu_total_ns);
		json_put_num(x, JK_SELF_SAMPLES, (double)r->self_weight);
		json_put_num(x, JK_TOTAL_SAMPLES, (double)r->total_weight);
		json_put_num(x, JK_OP_SELF_CUDA_NS, (double)r->self_cuda_ns);
		json_put_num(x, JK_OP_CUDA_TOTAL_NS, (double)r->cuda_total_ns);
		json_put_num(x, "self_gpu_ops", (double)r->self_gpu_ops);
		json_put_num(x, "gpu_ops", (double)r->gpu_ops);
		json_put_num(x, "self_launches", (double)r->self_launches);
		json_put_num(x, JK_OP_LAUNCHES, (double)r->launches);
		par = cJSON_AddArrayToObject(x, "parents");
		for (k = 0; par && k < r->nparents; k++)
			cJSON_AddItemToArray(par, cJSON_CreateString(ops->rows[r->parents[k]].name));
	}
	free(rows);
	return arr && cJSON_GetArraySize(arr) == (int)ops->nrows ? 0 : -ENOMEM;
}
