/*
 * cuda_analysis.c — the entry points of the CUDA analysis: runs the passes
 * (status, nesting, occupancy, tables, display names, sites, timeline, rules)
 * in order over one profile, and owns the analysis object and frees the
 * strings it keeps (kept by cuda_keep_str, cuda_names.c).
 * Formulas and thresholds are documented in docs/cuda.md; keep them in step.
 */
#include <string.h>

#include "cuda_int.h"
#include "memory.h"

void cuda_analysis_free(struct cuda_analysis *a)
{
	struct cuda_priv *pv = (struct cuda_priv *)a;
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->nstatus_lines; i++)
		free(a->status_lines[i]);
	for (i = 0; i < pv->nstrs; i++)
		free(pv->strs[i]);
	free(pv->strs);
	cuda_smap_free(&pv->kdisp);
	free(a->ops);
	free(a->kernels);
	free(a->memops);
	free(a->api);
	free(a->sites);
	rules_findings_free(a->recos, a->nrecos);
	free(a->status);
	free(a->shares);
	free(a->gpus);
	free(a->status_lines);
	free(a->devices);
	free(pv);
}

int cuda_analyze(const struct profile *p, struct cuda_analysis **out)
{
	struct mem_analysis *m = NULL;
	int ret;

	*out = NULL;
	if (p->nmemory && (!(m = calloc(1, sizeof(*m))) || mem_gpu_analyze(p, m) < 0)) {
		mem_free(m);
		return -ENOMEM;
	}
	ret = cuda_analyze_ops(p, NULL, m, out);
	mem_free(m);
	return ret;
}

int cuda_analyze_ops(const struct profile *p, const struct op_analysis *ops,
		     const struct mem_analysis *mem, struct cuda_analysis **out)
{
	struct cuda_priv *pv = calloc(1, sizeof(*pv));
	struct cuda_analysis *a;
	struct cuda_nest ns = { 0 };
	const char **range_names = NULL;
	double *bps = NULL, *occ = NULL;
	uint64_t *scratch = NULL;
	size_t i, nscratch;
	int ret = -ENOMEM;

	*out = NULL;
	if (!pv)
		return -ENOMEM;
	a = &pv->pub;
	/* Ranges alone (a CPU-only program with annotations) are not CUDA data. */
	a->has_data = p->ncuda_api || p->ngpu_ops;
	if ((ret = cuda_status_build(a, p)))
		goto out;
	if (!a->has_data && !a->nstatus) {
		ret = 0;
		goto out;
	}
	nscratch = p->ngpu_ops + p->ncuda_api + p->nranges + 1;
	scratch = util_reallocarray(NULL, nscratch, sizeof(*scratch));
	bps = util_reallocarray(NULL, p->ngpu_ops + 1, sizeof(*bps));
	occ = util_reallocarray(NULL, p->ngpu_ops + 1, sizeof(*occ));
	range_names = calloc(p->nranges + 1, sizeof(*range_names));
	ret = -ENOMEM;
	if (!scratch || !bps || !occ || !range_names)
		goto out;
	for (i = 0; i < p->nranges; i++)
		if (range_is_span(&p->ranges[i]) &&
		    !(range_names[i] = cuda_range_key(pv, &p->ranges[i])))
			goto out;
	if ((ret = cuda_nest_build(p, &ns)))
		goto out;
	cuda_kernel_occupancy(p, bps, occ);
	if ((ret = cuda_tables_build(pv, p, &ns, range_names, bps, occ, scratch)) ||
	    (ret = cuda_display_build(pv)) || (ret = cuda_sites_build(pv, p, &ns, ops)) ||
	    (ret = cuda_timeline_build(a, p, &ns, bps, occ)))
		goto out;
	if (a->has_data && (ret = cuda_rules_build(a, p, range_names, scratch, ops, mem)))
		goto out;
	cuda_sort_ops(a, NULL);
	ret = 0;
out:
	cuda_nest_free(&ns);
	free(scratch);
	free(bps);
	free(occ);
	free(range_names);
	if (ret == 0 && (a->has_data || a->nstatus)) {
		*out = a;
	} else {
		cuda_analysis_free(a);
	}
	return ret;
}
