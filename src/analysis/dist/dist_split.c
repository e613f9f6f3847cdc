/*
 * dist_split.c — where each rank's time went (dist.h's split): wall into
 * MPI, CPU and the rest, for the run and for each step, on the reference
 * clock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dist_int.h"
#include "steps.h"

/* --- the split -------------------------------------------------------------------- */

static void host_split(struct dist_split *s, uint64_t wall, uint64_t mpi, uint64_t cpu)
{
	memset(s, 0, sizeof(*s));
	s->wall_ns = wall;
	s->communication_ns = mpi < wall ? mpi : wall;
	s->computation_ns = cpu < wall - s->communication_ns ? cpu : wall - s->communication_ns;
	s->other_ns = wall - s->communication_ns - s->computation_ns;
	s->gpu = 0;
}

/* MPI time of process proc inside [t0, t1) of its own clock (union). */
static uint64_t mpi_in(const struct profile *p, uint32_t proc, uint64_t t0, uint64_t t1)
{
	size_t lo = 0, hi = p->nmpi_calls;
	uint64_t sum = 0, cover = t0;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (p->mpi_calls[mid].process < proc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < p->nmpi_calls && p->mpi_calls[lo].process == proc; lo++) {
		const struct prof_mpi_call *c = &p->mpi_calls[lo];
		uint64_t s = c->start > cover ? c->start : cover, e = c->end < t1 ? c->end : t1;

		if (c->start >= t1)
			break;
		if (dist_is_env(c->call) || e <= s)
			continue;
		sum += e - s;
		cover = e;
	}
	return sum;
}

/*
 * The split of each step of rank i (r->step_split, in the order of the
 * steps): the GPU ops of the step's process in its window, one
 * dist_gpu_split_many per process of the rank (the ops sorted and merged
 * once, not once per step), else the host's view.  mask: scratch, one byte
 * per process.
 */
static int step_splits(struct dist_work *w, size_t i, uint8_t *mask)
{
	const struct profile *p = w->p;
	const struct step_analysis *sa = w->a->steps;
	struct dist_rank *r = &w->d->ranks[i];
	size_t n = 0, a, b, m, j, *idx, *pos;
	uint64_t *t0, *t1;
	struct dist_split *tmp;
	uint8_t *done;
	int ret = 0;

	r->step_split = calloc(r->nsteps, sizeof(*r->step_split));
	idx = calloc(r->nsteps, sizeof(*idx));
	pos = calloc(r->nsteps, sizeof(*pos));
	t0 = calloc(r->nsteps, sizeof(*t0));
	t1 = calloc(r->nsteps, sizeof(*t1));
	tmp = calloc(r->nsteps, sizeof(*tmp));
	done = calloc(r->nsteps, 1);
	if (!r->step_split || !idx || !pos || !t0 || !t1 || !tmp || !done) {
		ret = -ENOMEM;
		goto out;
	}
	for (j = 0; j < sa->nsteps && n < r->nsteps; j++) {
		const struct step *s = &sa->steps[j];

		if (s->process < p->nprocesses && w->procrank[s->process] == (int32_t)i)
			idx[n++] = j;
	}
	for (a = 0; a < n; a++) {
		uint32_t q = sa->steps[idx[a]].process;
		int g;

		if (done[a])
			continue;
		for (b = a, m = 0; b < n; b++) {
			const struct step *s = &sa->steps[idx[b]];

			if (s->process != q)
				continue;
			pos[m] = b;
			t0[m] = s->start;
			t1[m] = s->end;
			done[b] = 1;
			m++;
		}
		memset(mask, 0, p->nprocesses);
		mask[q] = 1;
		g = dist_gpu_split_many(p, mask, t0, t1, m, tmp);
		if (g < 0) {
			ret = g;
			goto out;
		}
		for (b = 0; b < m; b++)
			r->step_split[pos[b]] = tmp[b];
	}
	for (a = 0; a < n; a++) {
		const struct step *s = &sa->steps[idx[a]];
		struct dist_split *ss = &r->step_split[a];

		if (!ss->gpu)
			host_split(ss, s->end > s->start ? s->end - s->start : 0,
				   mpi_in(p, s->process, s->start, s->end), s->cpu_ns);
	}
out:
	free(idx);
	free(pos);
	free(t0);
	free(t1);
	free(tmp);
	free(done);
	return ret;
}

int dist_splits(struct dist_work *w)
{
	const struct profile *p = w->p;
	const struct step_analysis *sa = w->a ? w->a->steps : NULL;
	struct dist_analysis *d = w->d;
	uint8_t *mask = calloc(p->nprocesses ? p->nprocesses : 1, 1);
	size_t i, j;

	if (!mask)
		return -ENOMEM;
	for (i = 0; i < d->nranks; i++) {
		struct dist_rank *r = &d->ranks[i];
		const struct prof_process *pr = &p->processes[r->process];
		int ret;

		for (j = 0; j < p->nprocesses; j++)
			mask[j] = w->procrank[j] == (int32_t)i;
		ret = dist_gpu_split(p, mask, pr->start, pr->end, &r->split);
		if (ret < 0) {
			free(mask);
			return ret;
		}
		if (ret > 0) {
			r->split.gpu = 1;
			r->gpu_ns = r->split.computation_ns + r->split.overlap_ns +
				    r->split.communication_ns;
		} else {
			host_split(&r->split, r->wall_ns, r->mpi_ns, r->cpu_ns);
		}
		if (!sa || !r->nsteps)
			continue;
		ret = step_splits(w, i, mask);
		if (ret < 0) {
			free(mask);
			return ret;
		}
	}
	free(mask);
	return 0;
}

