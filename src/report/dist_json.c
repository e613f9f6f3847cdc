/*
 * dist_json.c — the JSON report's "distributed" object (dist.h), exactly as
 * docs/distributed.md shows it and docs/report.schema.json checks it.  Key
 * names are public API.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "analysis.h"
#include "dist.h"
#include "dist_report.h"
#include "json_keys.h"
#include "json_put.h"

/* an uncertainty: null when unknown */
static int unc(cJSON *o, const char *key, uint64_t v)
{
	if (v == UINT64_MAX)
		return cJSON_AddNullToObject(o, key) ? 0 : -ENOMEM;
	return json_put_num(o, key, (double)v);
}

static int split_fill(cJSON *e, const struct dist_split *s)
{
	int err = 0;

	err |= json_put_str(e, "source", s->gpu ? "gpu" : "host");
	err |= json_put_num(e, "computation_ns", (double)s->computation_ns);
	err |= json_put_num(e, "overlap_ns", (double)s->overlap_ns);
	err |= json_put_num(e, "communication_ns", (double)s->communication_ns);
	err |= json_put_num(e, "other_ns", (double)s->other_ns);
	return err;
}

/* "split": the rank's whole run; "step_splits": one per step, in order */
static int split_json(cJSON *o, const struct dist_rank *r)
{
	cJSON *e = cJSON_AddObjectToObject(o, "split"), *arr;
	size_t k;

	if (!e || split_fill(e, &r->split))
		return -ENOMEM;
	if (!r->step_split)
		return 0;
	if (!(arr = cJSON_AddArrayToObject(o, "step_splits")))
		return -ENOMEM;
	for (k = 0; k < r->nsteps; k++) {
		cJSON *x = cJSON_CreateObject();

		if (!x || !cJSON_AddItemToArray(arr, x)) {
			cJSON_Delete(x);
			return -ENOMEM;
		}
		if (split_fill(x, &r->step_split[k]))
			return -ENOMEM;
	}
	return 0;
}

static int ranks_json(cJSON *o, const struct analysis *a, const struct dist_analysis *d)
{
	cJSON *arr = cJSON_AddArrayToObject(o, JK_DIST_RANKS);
	int err = 0;
	size_t i;

	if (!arr)
		return -ENOMEM;
	for (i = 0; i < d->nranks; i++) {
		const struct dist_rank *r = &d->ranks[i];
		const struct prof_process *pr = &a->profile->processes[r->process];
		cJSON *e = cJSON_CreateObject(), *c;

		if (!e || !cJSON_AddItemToArray(arr, e)) {
			cJSON_Delete(e);
			return -ENOMEM;
		}
		err |= json_put_num(e, "rank", r->rank);
		err |= json_put_num(e, "local_rank", r->local_rank);
		err |= json_put_str(e, "host", r->host);
		err |= json_put_num(e, JK_PID, r->pid);
		err |= json_put_num(e, "processes", r->nprocesses);
		err |= json_put_str(e, "device", r->device);
		err |= cJSON_AddBoolToObject(e, "crashed", r->crashed != 0) ? 0 : -ENOMEM;
		err |= json_put_str(e, "source", dist_source_name(pr->rank.source));
		err |= json_put_num(e, JK_WALL_NS, (double)r->wall_ns);
		err |= json_put_num(e, "cpu_ns", (double)r->cpu_ns);
		err |= json_put_num(e, "gpu_ns", (double)r->gpu_ns);
		err |= json_put_num(e, "mpi_ns", (double)r->mpi_ns);
		err |= json_put_num(e, "mpi_wait_ns", (double)r->mpi_wait_ns);
		err |= json_put_num(e, "compute_ns", (double)r->compute_ns);
		err |= json_put_num(e, "bytes_sent", (double)r->bytes_sent);
		err |= json_put_num(e, "bytes_recv", (double)r->bytes_recv);
		err |= json_put_num(e, "steps", (double)r->nsteps);
		err |= json_put_num(e, "step_mean_ns", (double)r->step_mean_ns);
		err |= json_put_num(e, "step_max_ns", (double)r->step_max_ns);
		err |= json_put_num(e, "compute_per_step_ns", (double)r->compute_per_step_ns);
		err |= split_json(e, r);
		if (!(c = cJSON_AddObjectToObject(e, "clock")))
			return -ENOMEM;
		err |= json_put_str(c, "source", dist_clock_name(r->clock_source));
		err |= json_put_num(c, "offset_ns", (double)r->clock_offset_ns);
		err |= unc(c, "uncertainty_ns", r->clock_uncertainty_ns);
		if (err)
			return -ENOMEM;
	}
	return 0;
}

static int sites_json(cJSON *o, const struct dist_analysis *d)
{
	cJSON *arr = cJSON_AddArrayToObject(o, "sites");
	int err = 0;
	size_t i;

	if (!arr)
		return -ENOMEM;
	for (i = 0; i < d->nsites; i++) {
		const struct dist_site *s = &d->sites[i];
		cJSON *e = cJSON_CreateObject();

		if (!e || !cJSON_AddItemToArray(arr, e)) {
			cJSON_Delete(e);
			return -ENOMEM;
		}
		err |= json_put_str(e, "call", s->call);
		err |= json_put_str(e, "function", s->function);
		err |= json_put_str(e, "file", s->file);
		err |= json_put_num(e, "line", s->line);
		err |= json_put_num(e, "calls", (double)s->calls);
		err |= json_put_num(e, "time_ns", (double)s->time_ns);
		err |= json_put_num(e, "max_ns", (double)s->max_ns);
		err |= json_put_num(e, "bytes", (double)s->bytes);
		err |= json_put_num(e, "app_pct", s->app_pct);
		err |= json_put_num(e, "mpi_pct", s->mpi_pct);
		err |= json_put_num(e, "cov", s->cov);
		err |= json_put_num(e, "wait_ns", (double)s->wait_ns);
	}
	return err;
}

static int colls_json(cJSON *o, const struct dist_analysis *d)
{
	cJSON *arr = cJSON_AddArrayToObject(o, "collectives");
	int err = 0;
	size_t i;

	if (!arr)
		return -ENOMEM;
	for (i = 0; i < d->ncolls; i++) {
		const struct dist_collective *c = &d->colls[i];
		cJSON *e = cJSON_CreateObject();

		if (!e || !cJSON_AddItemToArray(arr, e)) {
			cJSON_Delete(e);
			return -ENOMEM;
		}
		err |= json_put_str(e, "call", c->call);
		err |= json_put_num(e, "instances", (double)c->instances);
		err |= json_put_num(e, "unmatched", (double)c->unmatched);
		err |= json_put_num(e, "time_ns", (double)c->time_ns);
		err |= json_put_num(e, "wait_ns", (double)c->wait_ns);
		err |= json_put_num(e, "transfer_ns", (double)c->transfer_ns);
		err |= json_put_num(e, "bytes", (double)c->bytes);
		err |= json_put_num(e, "latest_rank", c->latest_rank);
		err |= json_put_num(e, "latest_count", (double)c->latest_count);
	}
	return err;
}

static int hists_json(cJSON *o, const struct dist_analysis *d)
{
	cJSON *arr = cJSON_AddArrayToObject(o, "histograms");
	int err = 0;
	size_t i;
	unsigned k;

	if (!arr)
		return -ENOMEM;
	for (i = 0; i < d->nhists; i++) {
		cJSON *e = cJSON_CreateObject(), *bins;
		uint64_t le = 64;

		if (!e || !cJSON_AddItemToArray(arr, e)) {
			cJSON_Delete(e);
			return -ENOMEM;
		}
		err |= json_put_str(e, "call", d->hists[i].call);
		if (!(bins = cJSON_AddArrayToObject(e, "bins")))
			return -ENOMEM;
		for (k = 0; k < DIST_HIST_BINS; k++, le *= 4) {
			cJSON *b = cJSON_CreateObject();

			if (!b || !cJSON_AddItemToArray(bins, b)) {
				cJSON_Delete(b);
				return -ENOMEM;
			}
			/* the last bin has no upper bound */
			if (k + 1 < DIST_HIST_BINS)
				err |= json_put_num(b, "le", (double)le);
			else
				err |= cJSON_AddNullToObject(b, "le") ? 0 : -ENOMEM;
			err |= json_put_num(b, "count", (double)d->hists[i].count[k]);
		}
	}
	return err;
}

static int recos_json(cJSON *o, const struct dist_analysis *d)
{
	cJSON *arr = cJSON_AddArrayToObject(o, "recommendations");
	int err = 0;
	size_t i;

	if (!arr)
		return -ENOMEM;
	for (i = 0; i < d->nfindings; i++) {
		cJSON *e = cJSON_CreateObject();

		if (!e || !cJSON_AddItemToArray(arr, e)) {
			cJSON_Delete(e);
			return -ENOMEM;
		}
		err |= json_put_str(e, "id", d->findings[i].id);
		err |= json_put_str(e, "message", d->findings[i].message);
		err |= json_put_str(e, "evidence", d->findings[i].evidence);
	}
	return err;
}

int report_dist_json(const struct analysis *a, cJSON *root)
{
	const struct dist_analysis *d = a->dist;
	cJSON *o, *c, *s;
	int err = 0;

	if (!d || !d->nranks)
		return 0;
	if (!(o = cJSON_AddObjectToObject(root, JK_DISTRIBUTED)))
		return -ENOMEM;
	err |= json_put_num(o, "world_size", d->world_size);
	err |= json_put_num(o, "ranks_found", (double)d->nranks);
	err |= json_put_num(o, "missing", (double)d->missing);
	err |= json_put_num(o, "selected", (double)d->selected);
	err |= json_put_str(o, "mpi", d->mpi);
	if (!(c = cJSON_AddObjectToObject(o, "clock")))
		return -ENOMEM;
	err |= unc(c, "uncertainty_ns", d->clock_uncertainty_ns);
	err |= json_put_num(o, JK_DIST_IMBALANCE, d->imbalance);
	if (d->straggler < 0) {
		err |= cJSON_AddNullToObject(o, "straggler") ? 0 : -ENOMEM;
	} else {
		if (!(s = cJSON_AddObjectToObject(o, "straggler")))
			return -ENOMEM;
		err |= json_put_num(s, "rank", d->straggler);
		err |= json_put_num(s, "ratio", d->straggler_ratio);
		if (d->straggler_call)
			err |= json_put_str(s, "call", d->straggler_call);
		else
			err |= cJSON_AddNullToObject(s, "call") ? 0 : -ENOMEM;
		err |= json_put_num(s, "wait_pct", d->straggler_wait_pct);
	}
	err |= json_put_num(o, "app_ns", (double)d->app_ns);
	err |= json_put_num(o, JK_DIST_MPI_NS, (double)d->mpi_ns);
	err |= json_put_num(o, "mpi_pct",
			    d->app_ns ? 100.0 * (double)d->mpi_ns / (double)d->app_ns : 0);
	if (err || ranks_json(o, a, d) || sites_json(o, d) || colls_json(o, d) || hists_json(o, d) ||
	    recos_json(o, d))
		return -ENOMEM;
	return 0;
}
