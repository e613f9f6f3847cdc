/*
 * dist.c — the distributed view (dist.h, docs/distributed.md "The merged
 * report"): the ranks of the profile, their wall, CPU, GPU, MPI and compute
 * time, steps, load imbalance and the straggler, the devices, and the
 * collectives kept; the waits of matched calls are dist_match.c's, call
 * sites and message sizes dist_sites.c's, the split of each rank's time
 * dist_split.c's, the rules dist_rules.c's.  Every comparison across ranks
 * is on the reference clock (prof_rank_time).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist_int.h"
#include "load.h"
#include "steps.h"
#include "util.h"

/* --- ranks -------------------------------------------------------------------- */

struct rp {
	int32_t rank;
	uint32_t proc;
	uint64_t start;
};

static int rp_cmp(const void *a, const void *b)
{
	const struct rp *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->proc < y->proc ? -1 : x->proc > y->proc;
}

static int ranks_build(struct dist_work *w)
{
	const struct profile *p = w->p;
	struct dist_analysis *d = w->d;
	struct rp *v;
	size_t i, n = 0;

	v = calloc(p->nprocesses ? p->nprocesses : 1, sizeof(*v));
	w->procrank = malloc((p->nprocesses ? p->nprocesses : 1) * sizeof(*w->procrank));
	if (!v || !w->procrank) {
		free(v);
		return -ENOMEM;
	}
	for (i = 0; i < p->nprocesses; i++) {
		w->procrank[i] = -1;
		if (p->processes[i].rank.rank < 0)
			continue;
		v[n].rank = p->processes[i].rank.rank;
		v[n].proc = (uint32_t)i;
		v[n].start = dist_ref_time(p, (uint32_t)i, p->processes[i].start);
		n++;
	}
	if (!n) {
		free(v);
		return 0;
	}
	qsort(v, n, sizeof(*v), rp_cmp);
	d->ranks = calloc(n, sizeof(*d->ranks));
	if (!d->ranks) {
		free(v);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		const struct prof_process *pr = &p->processes[v[i].proc];
		const struct prof_rank_proc *pk = &pr->rank;
		struct dist_rank *r;
		uint64_t s = v[i].start, e = dist_ref_time(p, v[i].proc, pr->end);

		if (!d->nranks || d->ranks[d->nranks - 1].rank != v[i].rank) {
			/* its first process (the earliest) is its main one */
			r = &d->ranks[d->nranks++];
			r->rank = v[i].rank;
			r->local_rank = pk->local_rank;
			r->world_size = pk->world_size;
			r->host = pk->host ? pk->host : "";
			r->process = v[i].proc;
			r->pid = pr->pid;
			r->device = NULL; /* devices() */
			r->crashed = !pr->exited;
			r->start = s;
			r->end = e;
			r->clock_source = pk->clock_source;
			r->clock_offset_ns = (int64_t)dist_ref_time(p, v[i].proc, pr->start) -
					     (int64_t)pr->start;
			r->clock_uncertainty_ns = pk->clock_uncertainty;
			if (pk->clock_source == PROF_CLOCK_NONE)
				r->clock_uncertainty_ns = 0;
		}
		r = &d->ranks[d->nranks - 1];
		r->nprocesses++;
		if (s < r->start)
			r->start = s;
		if (e > r->end)
			r->end = e;
		r->cpu_ns += pr->weight * prof_period_of_process(p, v[i].proc);
		if (pk->world_size > r->world_size)
			r->world_size = pk->world_size;
		if (!d->mpi && pk->mpi_version && pk->mpi_version[0])
			d->mpi = pk->mpi_version;
		w->procrank[v[i].proc] = (int32_t)(d->nranks - 1);
	}
	free(v);
	for (i = 0; i < d->nranks; i++) {
		struct dist_rank *r = &d->ranks[i];

		r->wall_ns = r->end > r->start ? r->end - r->start : 0;
		if (r->world_size > d->world_size)
			d->world_size = r->world_size;
		if (r->clock_uncertainty_ns > d->clock_uncertainty_ns)
			d->clock_uncertainty_ns = r->clock_uncertainty_ns;
	}
	if (!d->mpi)
		d->mpi = "";
	/* missing: of the ranks asked for (all, or --ranks), those without a
	 * session; a rank --ranks left out is not missing */
	d->selected = d->world_size > 0 ? (size_t)d->world_size : 0;
	if (p->rank_filter && d->world_size > 0) {
		char e[8];
		int32_t r;

		d->selected = 0;
		for (r = 0; r < d->world_size; r++)
			if (prof_ranks_match(p->rank_filter, r, e, sizeof(e)) == 1)
				d->selected++;
	}
	d->missing = d->selected > d->nranks ? d->selected - d->nranks : 0;
	return 1;
}

/* --- MPI time, bytes, compute window ----------------------------------------------- */

/* mpi_ns: the union of each process's MPI calls (threads together, nested
 * calls once), Init/Finalize left out: they bound the compute window. */
static void mpi_times(struct dist_work *w, uint64_t *win_start, uint64_t *win_end)
{
	const struct profile *p = w->p;
	struct dist_analysis *d = w->d;
	uint32_t proc = UINT32_MAX;
	uint64_t cover = 0;
	size_t i;

	for (i = 0; i < p->nmpi_calls; i++) {
		const struct prof_mpi_call *c = &p->mpi_calls[i];
		int32_t ri = c->process < p->nprocesses ? w->procrank[c->process] : -1;
		struct dist_rank *r;
		uint64_t s, e;

		if (ri < 0)
			continue;
		r = &d->ranks[ri];
		r->bytes_sent += c->bytes_sent;
		r->bytes_recv += c->bytes_recv;
		s = dist_ref_time(p, c->process, c->start);
		e = dist_ref_time(p, c->process, c->end);
		if (dist_is_env(c->call)) {
			if ((c->call == CBN_MPI_Init || c->call == CBN_MPI_Init_thread) &&
			    (!win_start[ri] || e < win_start[ri]))
				win_start[ri] = e;
			if (c->call == CBN_MPI_Finalize && s > win_end[ri])
				win_end[ri] = s;
			continue;
		}
		if (c->process != proc) {
			proc = c->process;
			cover = 0;
		}
		if (e <= cover)
			continue;
		r->mpi_ns += e - (s > cover ? s : cover);
		cover = e;
	}
	for (i = 0; i < d->nranks; i++) {
		struct dist_rank *r = &d->ranks[i];
		uint64_t win = r->wall_ns;

		if (win_start[i] && win_end[i] > win_start[i])
			win = win_end[i] - win_start[i];
		r->compute_ns = win > r->mpi_ns ? win - r->mpi_ns : 0;
		d->app_ns += r->wall_ns;
		d->mpi_ns += r->mpi_ns;
	}
}

/* --- steps, balance, straggler --------------------------------------------------- */

static void steps_of_ranks(struct dist_work *w, const uint64_t *win_start)
{
	const struct profile *p = w->p;
	const struct step_analysis *sa = w->a ? w->a->steps : NULL;
	struct dist_analysis *d = w->d;
	size_t i;

	if (sa && sa->nsteps) {
		uint64_t *sum = calloc(d->nranks, sizeof(*sum));

		if (!sum)
			return;
		for (i = 0; i < sa->nsteps; i++) {
			const struct step *s = &sa->steps[i];
			int32_t ri = s->process < p->nprocesses ? w->procrank[s->process] : -1;
			uint64_t dur = s->end > s->start ? s->end - s->start : 0;

			if (ri < 0)
				continue;
			d->ranks[ri].nsteps++;
			sum[ri] += dur;
			if (dur > d->ranks[ri].step_max_ns)
				d->ranks[ri].step_max_ns = dur;
		}
		for (i = 0; i < d->nranks; i++)
			if (d->ranks[i].nsteps)
				d->ranks[i].step_mean_ns = sum[i] / d->ranks[i].nsteps;
		free(sum);
	} else {
		/* No steps named: an iteration is one call of the rank's most
		 * frequent collective (an SPMD loop ends each step in one). */
		uint16_t *best = calloc(d->nranks, sizeof(*best));
		uint64_t *prev = calloc(d->nranks, sizeof(*prev));

		if (!best || !prev) {
			free(best);
			free(prev);
			return;
		}
		for (i = 0; i < d->nranks; i++) {
			uint32_t top = 0;

			for (unsigned c = 0; c < CBN_MPI_CALL_MAX; c++)
				if (w->call_rank_count[(size_t)c * d->nranks + i] > top) {
					top = w->call_rank_count[(size_t)c * d->nranks + i];
					best[i] = (uint16_t)c;
				}
			prev[i] = win_start[i] ? win_start[i] : d->ranks[i].start;
		}
		for (i = 0; i < p->nmpi_calls; i++) {
			const struct prof_mpi_call *c = &p->mpi_calls[i];
			int32_t ri = w->procrank[c->process];
			uint64_t e, dur;

			if (ri < 0 || c->call != best[ri] || !best[ri] ||
			    (uint32_t)c->process != d->ranks[ri].process)
				continue;
			e = dist_ref_time(p, c->process, c->end);
			dur = e > prev[ri] ? e - prev[ri] : 0;
			d->ranks[ri].nsteps++;
			d->ranks[ri].step_mean_ns += dur; /* a sum until below */
			if (dur > d->ranks[ri].step_max_ns)
				d->ranks[ri].step_max_ns = dur;
			prev[ri] = e;
		}
		for (i = 0; i < d->nranks; i++)
			if (d->ranks[i].nsteps)
				d->ranks[i].step_mean_ns /= d->ranks[i].nsteps;
		free(best);
		free(prev);
	}
	for (i = 0; i < d->nranks; i++) {
		struct dist_rank *r = &d->ranks[i];

		r->compute_per_step_ns = r->nsteps ? r->compute_ns / r->nsteps : r->compute_ns;
	}
}

static int balance(struct dist_work *w, const uint64_t *win_start, const uint64_t *win_end)
{
	struct dist_analysis *d = w->d;
	uint64_t *v, max = 0, sum = 0, median;
	size_t i, imax = 0;

	d->straggler = -1;
	if (d->nranks < 2)
		return 0;
	v = malloc(d->nranks * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < d->nranks; i++) {
		v[i] = d->ranks[i].compute_per_step_ns;
		sum += v[i];
		if (v[i] > max) {
			max = v[i];
			imax = i;
		}
	}
	d->imbalance = sum ? (double)max * (double)d->nranks / (double)sum : 1.0;
	qsort(v, d->nranks, sizeof(*v), util_u64_cmp);
	median = d->nranks % 2 ? v[d->nranks / 2] : (v[d->nranks / 2 - 1] + v[d->nranks / 2]) / 2;
	free(v);
	if (d->imbalance < DIST_STRAGGLER_MIN)
		return 0;
	d->straggler = d->ranks[imax].rank;
	d->straggler_ratio = median ? (double)max / (double)median : 0;
	/* where the others wait for it: the collective it arrives last at most
	 * often (most wait on ties) */
	{
		uint32_t best = 0;
		uint64_t bestwait = 0;
		unsigned bc = 0;

		for (unsigned c = 0; c < CBN_MPI_CALL_MAX; c++) {
			uint32_t n = w->call_rank_latest[(size_t)c * d->nranks + imax];
			uint64_t wt = 0;

			for (i = 0; i < d->nranks; i++)
				if (i != imax)
					wt += w->call_rank_wait[(size_t)c * d->nranks + i];
			if (n > best || (n == best && n && wt > bestwait)) {
				best = n;
				bestwait = wt;
				bc = c;
			}
		}
		if (best) {
			double pct = 0;
			size_t n = 0;

			d->straggler_call = cbn_mpi_call_name(bc);
			for (i = 0; i < d->nranks; i++) {
				const struct dist_rank *r = &d->ranks[i];
				uint64_t span = r->nsteps ? r->step_mean_ns * r->nsteps : 0;

				if (i == imax)
					continue;
				if (!span)
					span = win_start[i] && win_end[i] > win_start[i] ?
						       win_end[i] - win_start[i] : r->wall_ns;
				if (span) {
					pct += 100.0 *
					       (double)w->call_rank_wait[(size_t)bc * d->nranks + i] /
					       (double)span;
					n++;
				}
			}
			d->straggler_wait_pct = n ? pct / (double)n : 0;
		}
	}
	return 0;
}

/* --- devices --------------------------------------------------------------------- */

/* "0", "0,1": the CUDA devices the rank's GPU ops ran on (ids below 64),
 * "" none.  Owned by the rank (dist_free). */
static int devices(struct dist_work *w)
{
	const struct profile *p = w->p;
	struct dist_analysis *d = w->d;
	uint64_t *used = calloc(d->nranks, sizeof(*used));
	size_t i;

	if (!used)
		return -ENOMEM;
	for (i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *g = &p->gpu_ops[i];
		int32_t ri = g->process < p->nprocesses ? w->procrank[g->process] : -1;

		if (ri >= 0 && g->device < 64)
			used[ri] |= 1ull << g->device;
	}
	for (i = 0; i < d->nranks; i++) {
		char buf[64 * 3 + 1] = "";
		size_t off = 0;

		for (unsigned k = 0; k < 64; k++)
			if (used[i] >> k & 1)
				off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%u",
							off ? "," : "", k);
		if (!(d->ranks[i].device = strdup(buf))) {
			free(used);
			return -ENOMEM;
		}
	}
	free(used);
	return 0;
}

/* --- the whole ------------------------------------------------------------------- */

static int coll_time_cmp(const void *a, const void *b)
{
	const struct dist_collective *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns > y->time_ns ? -1 : 1;
	return strcmp(x->call, y->call);
}

static int colls_keep(struct dist_work *w, struct dist_collective *percall)
{
	struct dist_analysis *d = w->d;
	unsigned c;
	size_t n = 0, r;

	for (c = 0; c < CBN_MPI_CALL_MAX; c++)
		n += percall[c].call != NULL;
	if (!n)
		return 0;
	d->colls = calloc(n, sizeof(*d->colls));
	if (!d->colls)
		return -ENOMEM;
	for (c = 0; c < CBN_MPI_CALL_MAX; c++) {
		struct dist_collective *dc;

		if (!percall[c].call)
			continue;
		dc = &d->colls[d->ncolls++];
		*dc = percall[c];
		dc->transfer_ns = dc->time_ns > dc->wait_ns ? dc->time_ns - dc->wait_ns : 0;
		dc->latest_rank = -1;
		for (r = 0; r < d->nranks; r++) {
			uint32_t k = w->call_rank_latest[(size_t)c * d->nranks + r];

			if (k > dc->latest_count) {
				dc->latest_count = k;
				dc->latest_rank = d->ranks[r].rank;
			}
		}
	}
	qsort(d->colls, d->ncolls, sizeof(*d->colls), coll_time_cmp);
	return 0;
}

int dist_analyze(const struct profile *p, const struct analysis *a, struct dist_analysis *out)
{
	struct dist_work w = {p, a, out, NULL, NULL, NULL, NULL, NULL, NULL, 0};
	struct dist_collective *percall = NULL;
	uint64_t *win_start = NULL, *win_end = NULL;
	size_t i, ncr;
	int ret;

	memset(out, 0, sizeof(*out));
	out->straggler = -1;
	if ((ret = ranks_build(&w)) <= 0)
		goto out;
	ncr = (size_t)CBN_MPI_CALL_MAX * out->nranks;
	w.wait = calloc(p->nmpi_calls ? p->nmpi_calls : 1, sizeof(*w.wait));
	w.site = calloc(p->nmpi_calls ? p->nmpi_calls : 1, sizeof(*w.site));
	w.call_rank_wait = calloc(ncr, sizeof(*w.call_rank_wait));
	w.call_rank_count = calloc(ncr, sizeof(*w.call_rank_count));
	w.call_rank_latest = calloc(ncr, sizeof(*w.call_rank_latest));
	percall = calloc(CBN_MPI_CALL_MAX, sizeof(*percall));
	win_start = calloc(out->nranks, sizeof(*win_start));
	win_end = calloc(out->nranks, sizeof(*win_end));
	ret = -ENOMEM;
	if (!w.wait || !w.site || !w.call_rank_wait || !w.call_rank_count || !w.call_rank_latest ||
	    !percall || !win_start || !win_end)
		goto out;
	mpi_times(&w, win_start, win_end);
	if ((ret = dist_collectives(&w, percall)) < 0 || (ret = dist_late_senders(&w)) < 0)
		goto out;
	for (i = 0; i < p->nmpi_calls; i++)
		if (w.procrank[p->mpi_calls[i].process] >= 0)
			out->ranks[w.procrank[p->mpi_calls[i].process]].mpi_wait_ns += w.wait[i];
	if ((ret = dist_sites(&w)) < 0 || (ret = dist_histograms(&w)) < 0 ||
	    (ret = colls_keep(&w, percall)) < 0)
		goto out;
	steps_of_ranks(&w, win_start);
	if ((ret = balance(&w, win_start, win_end)) < 0 || (ret = dist_splits(&w)) < 0 ||
	    (ret = devices(&w)) < 0)
		goto out;
	if ((ret = dist_rules_run(out, w.late_sender_ns)) < 0)
		goto out;
	ret = 1;
out:
	free(w.procrank);
	free(w.wait);
	free(w.site);
	free(w.call_rank_wait);
	free(w.call_rank_count);
	free(w.call_rank_latest);
	free(percall);
	free(win_start);
	free(win_end);
	if (ret <= 0) {
		dist_free(out);
		out->straggler = -1;
	}
	return ret;
}

void dist_free(struct dist_analysis *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->nranks; i++) {
		free(d->ranks[i].step_split);
		/* NULL until devices() ran, then owned */
		free((char *)d->ranks[i].device);
	}
	free(d->ranks);
	free(d->sites);
	free(d->colls);
	free(d->hists);
	rules_findings_free(d->findings, d->nfindings);
	memset(d, 0, sizeof(*d));
}
