/*
 * gate_run.c — the run just profiled as a struct gate_run, taken from its
 * analysis in memory: the figures its JSON report would hold (report/json.c,
 * report/cuda_json.c), without writing and parsing that report.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "analysis.h"
#include "cuda_analysis.h"
#include "cpu.h"
#include "dist.h"
#include "memory.h"
#include "gate_run.h"
#include "ops.h"
#include "steps.h"
#include "wait.h"

/* A figure the JSON report writes as null when negative (or not finite). */
static double or_nan(double v)
{
	return isfinite(v) && v >= 0 ? v : NAN;
}

static int from_cuda(const struct cuda_analysis *a, struct gate_run *r)
{
	struct gate_gpu *g = &r->gpu;
	size_t i;

	g->kernels = g->kernel_ns = g->memcpy_bytes = g->memcpy_ns = g->memcpy = NAN;
	g->api_calls = g->sync_ns = g->gpu_busy_ns = g->gpu_utilization = NAN;
	if (!a)
		return 0;
	r->has_cuda = 1;
	r->has_totals = 1;
	for (i = 0; i < a->nstatus; i++) {
		const struct cuda_status_row *s = &a->status[i];

		if (s->inferred || !s->state)
			continue;
		if (strcmp(s->state, "unavailable") == 0) {
			r->cuda_unavailable++;
			if (!r->cuda_message)
				r->cuda_message = s->message;
		} else if (strcmp(s->state, "started") == 0 || strcmp(s->state, "finished") == 0) {
			r->cuda_started++;
		}
	}
	g->kernels = (double)a->totals.kernels;
	g->kernel_ns = (double)a->totals.kernel_ns;
	g->memcpy_bytes = (double)a->totals.memcpy_bytes;
	g->memcpy_ns = (double)a->totals.memcpy_ns;
	g->memcpy = (double)a->totals.memcpy;
	g->api_calls = (double)a->totals.api_calls;
	g->sync_ns = (double)a->totals.sync_ns;
	g->gpu_busy_ns = (double)a->totals.gpu_busy_ns;
	g->gpu_utilization = or_nan(a->ov.gpu_utilization);
	r->kernels = calloc(a->nkernels ? a->nkernels : 1, sizeof(*r->kernels));
	r->api = calloc(a->napi ? a->napi : 1, sizeof(*r->api));
	if (!r->kernels || !r->api)
		return -ENOMEM;
	for (i = 0; i < a->nkernels; i++) {
		if (!a->kernels[i].name)
			continue;
		r->kernels[r->nkernels++] = (struct gate_count){
			a->kernels[i].name, (double)a->kernels[i].t.count,
			(double)a->kernels[i].t.total};
	}
	for (i = 0; i < a->napi; i++) {
		if (!a->api[i].name)
			continue;
		r->api[r->napi++] = (struct gate_count){
			a->api[i].name, (double)a->api[i].t.count, (double)a->api[i].t.total};
	}
	return 0;
}

/* What gate_json.c's read_memory takes from the memory object. */
static int from_memory(const struct profile *p, const struct mem_analysis *m, struct gate_run *r)
{
	uint32_t root_pid = p->nprocesses ? p->processes[0].pid : 0;
	int root_seen = 0;
	size_t i;

	r->mem_peak = r->mem_leaked = NAN;
	if (!m)
		return 0;
	r->has_memory = 1;
	r->mem_rate = (double)m->rate;
	r->mem_gpus = calloc(m->nspaces ? m->nspaces : 1, sizeof(*r->mem_gpus));
	r->mem_sites = calloc(m->nsites ? m->nsites : 1, sizeof(*r->mem_sites));
	if (!r->mem_gpus || !r->mem_sites)
		return -ENOMEM;
	for (i = 0; i < m->nspaces; i++) {
		const struct mem_space *s = &m->spaces[i];
		int is_root;

		if (s->kind == MEM_SPACE_GPU) {
			r->mem_gpus[r->nmem_gpus++] = (struct gate_mem_gpu){
				(double)s->device, (double)s->peak};
			continue;
		}
		is_root = s->process < p->nprocesses && p->processes[s->process].pid == root_pid;
		if (root_seen && !is_root)
			continue;
		if (is_root && !root_seen) {
			root_seen = 1;
			r->mem_peak = NAN;
		}
		if (!gate_has(r->mem_peak) || (double)s->peak > r->mem_peak) {
			r->mem_peak = (double)s->peak;
			r->mem_peak_exact = s->peak_exact;
		}
	}
	for (i = 0; i < m->nsites; i++) {
		const struct mem_site *s = &m->sites[i];

		/* the JSON report writes estimates as whole numbers */
		r->mem_sites[r->nmem_sites++] = (struct gate_mem_site){
			s->func < p->nfuncs && p->funcs[s->func].name ? p->funcs[s->func].name : "",
			s->file ? s->file : "", (double)s->line, (double)llround(s->bytes),
			(double)llround(s->allocs), s->kind == MEM_SPACE_GPU};
		if (s->kind != MEM_SPACE_GPU)
			r->mem_leaked = (gate_has(r->mem_leaked) ? r->mem_leaked : 0) +
					(double)llround(s->live_end_bytes);
	}
	if (!gate_has(r->mem_leaked) && r->mem_rate > 0)
		r->mem_leaked = 0;
	return 0;
}

/* What gate_json.c's read_steps takes from the steps object. */
static void from_steps(const struct step_analysis *s, struct gate_run *r)
{
	r->step_count = r->step_median = r->step_p90 = NAN;
	if (!s)
		return;
	r->has_steps = 1;
	r->step_count = (double)s->nsteps;
	r->step_median = (double)s->median_ns;
	r->step_p90 = (double)s->p90_ns;
}

/* What gate_json.c's read_dist takes from the distributed object. */
static void from_dist(const struct dist_analysis *d, struct gate_run *r)
{
	size_t i;

	r->dist_max_wall = r->dist_mpi_ns = r->dist_imbalance = NAN;
	if (!d || !d->nranks)
		return;
	r->has_dist = 1;
	r->dist_mpi_ns = (double)d->mpi_ns;
	r->dist_imbalance = d->imbalance;
	r->dist_max_wall = 0;
	for (i = 0; i < d->nranks; i++)
		if ((double)d->ranks[i].wall_ns > r->dist_max_wall)
			r->dist_max_wall = (double)d->ranks[i].wall_ns;
}

/* What gate_json.c's read_waiting takes from the waiting object. */
static int from_wait(const struct profile *p, const struct wait_analysis *w, struct gate_run *r)
{
	size_t i;

	r->wait_off_ns = r->wait_efficiency = NAN;
	if (!w)
		return 0;
	r->has_waiting = 1;
	r->wait_offcpu = w->offcpu != 0;
	r->wait_off_ns = (double)w->off_ns;
	r->wait_efficiency = isfinite(w->efficiency) ? w->efficiency : 0;
	r->locks = calloc(w->nlocks ? w->nlocks : 1, sizeof(*r->locks));
	if (!r->locks)
		return -ENOMEM;
	for (i = 0; i < w->nlocks; i++) {
		uint32_t f = w->locks[i].func;

		r->locks[r->nlocks++] = (struct gate_lock){
			f < p->nfuncs && p->funcs[f].name ? p->funcs[f].name : "",
			(double)w->locks[i].wait_ns};
	}
	return 0;
}

int gate_run_from_analysis(const struct analysis *a, struct gate_run *r)
{
	const struct profile *p = a->profile;
	const struct cpu_profile *c = a->cpu;
	size_t i, n = 0;

	memset(r, 0, sizeof(*r));
	while (p->argv && p->argv[n])
		n++;
	r->command = calloc(n + 1, sizeof(*r->command));
	r->funcs = calloc(c->nfuncs ? c->nfuncs : 1, sizeof(*r->funcs));
	r->lines = calloc(c->nlines ? c->nlines : 1, sizeof(*r->lines));
	if (!r->command || !r->funcs || !r->lines)
		goto nomem;
	for (i = 0; i < n; i++)
		r->command[r->ncommand++] = p->argv[i];
	r->wall_ns = (double)p->wall_ns;
	r->cpu_ns = (double)c->cpu_ns;
	r->samples = (double)c->samples;
	r->weight = (double)c->weight;
	r->period_ns = (double)p->period_ns;
	/* In the JSON report's order (tottime), so that ties break the same way. */
	for (i = 0; i < c->nfuncs; i++) {
		const struct cpu_func *f = &c->funcs[i];
		const char *name = p->funcs[f->func].name;

		r->funcs[r->nfuncs++] = (struct gate_func){
			name ? name : "", (double)f->self_ns, (double)f->total_ns,
			(double)f->self_w, (double)f->total_w,
			f->counted && f->calls ? (double)f->calls : NAN};
	}
	for (i = 0; i < c->nlines; i++) {
		const struct cpu_line *l = &c->lines[i];

		r->lines[r->nlines++] = (struct gate_line){
			l->file ? l->file : "", (double)l->line, (double)l->self_ns,
			(double)l->self_w};
	}
	if (a->ops) {
		r->has_ops = 1;
		r->ops = calloc(a->ops->nrows + 1, sizeof(*r->ops));
		if (!r->ops)
			goto nomem;
		for (i = 0; i < a->ops->nrows; i++) {
			const struct op_row *o = &a->ops->rows[i];

			r->ops[r->nops++] = (struct gate_op){
				o->name, (double)o->self_cpu_ns, (double)o->cpu_total_ns,
				(double)o->self_weight, (double)o->total_weight,
				(double)o->self_cuda_ns, (double)o->cuda_total_ns, (double)o->launches};
		}
	}
	if (from_cuda(a->cuda, r) < 0 || from_memory(p, a->memory, r) < 0)
		goto nomem;
	from_steps(a->steps, r);
	from_dist(a->dist, r);
	if (from_wait(p, a->wait, r) < 0)
		goto nomem;
	return 0;
nomem:
	gate_run_free(r);
	return -ENOMEM;
}

void gate_run_free(struct gate_run *r)
{
	if (!r)
		return;
	free(r->command);
	free(r->funcs);
	free(r->lines);
	free(r->kernels);
	free(r->api);
	free(r->ops);
	free(r->mem_gpus);
	free(r->mem_sites);
	free(r->locks);
	cJSON_Delete(r->owner);
	memset(r, 0, sizeof(*r));
}
