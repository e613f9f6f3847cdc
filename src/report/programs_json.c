/*
 * programs_json.c — "programs" of the JSON report (programs_report.h): each
 * program image with its CPU, wall, processes, kernel share, hottest
 * function and modules; docs/report.schema.json has every key.
 */
#include <errno.h>

#include "analysis.h"
#include "json_put.h"
#include "programs.h"
#include "programs_report.h"

static int program_json(cJSON *o, const struct profile *p, const struct program *g)
{
	cJSON *mods, *hot;
	size_t k;
	int err = 0;

	err |= json_put_str(o, "name", g->name);
	err |= json_put_str(o, "exe", g->exe);
	err |= json_put_num(o, "processes", g->images);
	err |= json_put_num(o, "threads", g->threads);
	err |= json_put_num(o, "samples", (double)g->samples);
	err |= json_put_num(o, "cpu_ns", (double)g->cpu_ns);
	err |= json_put_num(o, "kernel_ns", (double)g->kernel_ns);
	err |= json_put_num(o, "wall_ns", (double)g->wall_ns);
	if (g->top_func < p->nfuncs) {
		const struct prof_func *f = &p->funcs[g->top_func];

		if (!(hot = cJSON_AddObjectToObject(o, "hottest")))
			return -ENOMEM;
		err |= json_put_str(hot, "name", f->name);
		err |= json_put_str(hot, "file", f->file);
		err |= json_put_num(hot, "line", f->line);
		err |= json_put_num(hot, "self_ns", (double)g->top_func_ns);
	} else if (!cJSON_AddNullToObject(o, "hottest")) {
		return -ENOMEM;
	}
	if (!(mods = cJSON_AddArrayToObject(o, "modules")))
		return -ENOMEM;
	for (k = 0; k < g->nmods; k++) {
		cJSON *m = cJSON_CreateObject();

		if (!m)
			return -ENOMEM;
		cJSON_AddItemToArray(mods, m);
		err |= json_put_str(m, "name", g->mods[k].name);
		err |= json_put_num(m, "cpu_ns", (double)g->mods[k].cpu_ns);
	}
	err |= json_put_num(o, "other_modules", g->other_mods);
	err |= json_put_num(o, "other_modules_cpu_ns", (double)g->other_mods_ns);
	return err ? -ENOMEM : 0;
}

int report_programs_json(const struct analysis *a, cJSON *root)
{
	const struct prog_analysis *g = a->programs;
	cJSON *arr;
	size_t i;

	if (!g)
		return 0;
	if (!(arr = cJSON_AddArrayToObject(root, "programs")))
		return -ENOMEM;
	for (i = 0; i < g->n; i++) {
		cJSON *o = cJSON_CreateObject();

		if (!o)
			return -ENOMEM;
		cJSON_AddItemToArray(arr, o);
		if (program_json(o, a->profile, &g->v[i]) < 0)
			return -ENOMEM;
	}
	return 0;
}
