/*
 * load_mpi.c — the distributed side of a session (docs/distributed.md):
 * header.rank into prof_process.rank, MPI records into profile.mpi_calls
 * (sorted by (process, start), call sites interned with the samples' stacks),
 * CLOCK records and the clock alignment of every rank against the reference
 * (lowest) rank, and the --ranks filter.  Launcher side only.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../format/cbn_mpi.h"
#include "load_int.h"

/* A call longer than a day is a broken record (its end would stretch the
 * process's end). */
#define MPI_MAX_SPAN_NS 86400000000000ull

void load_mpi_header(struct load *L, struct prof_process *pr, const struct cbn_file_header *h)
{
	const struct cbn_rank_state *r = &h->rank;
	struct prof_rank_proc *pk = &pr->rank;

	memset(pk, 0, sizeof(*pk));
	pk->rank = r->rank;
	/* older files have an all-zero rank state: rank 0 with no source is
	 * "not a rank" (cbn_format.h) */
	if (r->source == CBN_RANK_NONE || r->rank < 0)
		pk->rank = -1;
	pk->local_rank = pk->rank < 0 ? -1 : r->local_rank;
	pk->world_size = r->world_size > 0 ? r->world_size : 0;
	pk->source = r->source;
	pk->host = load_strndup(L, r->host, strnlen(r->host, sizeof(r->host)));
	pk->mpi = r->mpi;
	pk->mpi_impl = r->mpi_impl;
	pk->mpi_version = load_strndup(L, r->mpi_version,
					     strnlen(r->mpi_version, sizeof(r->mpi_version)));
	pk->mpi_calls = r->mpi_calls;
	pk->mpi_lost = r->mpi_lost;
	pk->clock_source = PROF_CLOCK_NONE;
	pk->clock_uncertainty = 0;
}

static void clock_rec(struct load *L, const struct reader_rec *r)
{
	const struct cbn_rec_clock *c = (const void *)r->raw;
	struct load_file *F = L->f;
	struct prof_rank_proc *pk = &L->p->processes[F->proc].rank;
	uint64_t half = c->rtt / 2;

	if (!c->local) {
		F->mpi_bad++;
		return;
	}
	if (r->flags == CBN_CLOCK_AT_FINALIZE) {
		pk->clock_t1 = c->local;
		pk->clock_offset1 = c->offset;
		F->clock_fin = 1;
	} else {
		pk->clock_t0 = c->local;
		pk->clock_offset0 = c->offset;
		F->clock_init = 1;
	}
	/* the worst of the two estimates bounds the interpolation between them */
	if (half > pk->clock_uncertainty)
		pk->clock_uncertainty = half;
	pk->clock_source = PROF_CLOCK_MPI;
}

void load_mpi_rec(struct load *L, const struct reader_rec *r)
{
	const struct cbn_rec_mpi *m = (const void *)r->raw;
	struct profile *p = L->p;
	struct load_file *F = L->f;
	struct prof_mpi_call *e;

	if (r->type == CBN_REC_CLOCK) {
		clock_rec(L, r);
		return;
	}
	if (m->start == 0 || m->end < m->start || m->end - m->start > MPI_MAX_SPAN_NS ||
	    !cbn_mpi_call_name(m->call)) {
		F->mpi_bad++;
		return;
	}
	e = LOAD_PUSH(L, p->mpi_calls, p->nmpi_calls, L->capmpi);
	if (!e)
		return;
	e->start = m->start;
	e->end = m->end;
	e->bytes_sent = m->bytes_sent;
	e->bytes_recv = m->bytes_recv;
	e->process = F->proc;
	e->thread = load_thread(L, F->proc, m->tid ? m->tid : L->p->processes[F->proc].pid);
	e->stack = PROF_NONE;
	e->call = m->call;
	e->flags = r->flags;
	e->peer = m->peer;
	e->tag = m->tag;
	e->comm = m->comm;
	e->comm_size = m->comm_size;
	e->seq = m->seq;
	e->count = m->count;
	if (r->nframes) {
		/* the stack is built once the module map is complete */
		struct load_cstack *c = LOAD_PUSH(L, F->pstacks, F->npstacks, F->cappstacks);

		if (!c)
			return;
		c->correlation = (uint32_t)(p->nmpi_calls - 1 - F->mpi_first);
		c->pcs = r->pcs;
		c->nframes = r->nframes;
	}
	if (m->end > F->last_ts)
		F->last_ts = m->end;
}

static int mpi_cmp(const void *a, const void *b)
{
	const struct prof_mpi_call *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

void load_mpi_finish(struct load *L)
{
	struct profile *p = L->p;
	struct load_file *F = L->f;
	const struct prof_process *pr = &p->processes[F->proc];
	size_t i, n = p->nmpi_calls - F->mpi_first;

	/* the pcs are return addresses (the wrapper's callers): all at pc-1 */
	for (i = 0; i < F->npstacks; i++) {
		const struct load_cstack *c = &F->pstacks[i];
		struct prof_mpi_call *e = &p->mpi_calls[F->mpi_first + c->correlation];

		e->stack = load_stack(L, c->pcs, c->nframes, e->start, 1);
		if (L->nomem)
			return;
	}
	if (n > 1)
		qsort(p->mpi_calls + F->mpi_first, n, sizeof(*p->mpi_calls), mpi_cmp);
	if (F->mpi_bad)
		load_warn(L, "%s: skipped %" PRIu64 " damaged MPI or clock records", pr->file,
			  F->mpi_bad);
	if (pr->rank.mpi_lost)
		load_warn(L, "%s: %" PRIu64 " MPI calls were not recorded (the session file was "
			     "full); MPI time is undercounted", pr->file, pr->rank.mpi_lost);
	if (F->clock_fin && !F->clock_init) {
		/* one estimate: constant offset */
		struct prof_rank_proc *pk = &p->processes[F->proc].rank;

		pk->clock_t0 = pk->clock_t1;
		pk->clock_offset0 = pk->clock_offset1;
		pk->clock_t1 = 0;
	}
}

/* The reference clock: every rank on the lowest rank's CLOCK_MONOTONIC
 * (profile.h, prof_rank_time).  Runs once every file has been read. */
void load_mpi_align(struct load *L)
{
	struct profile *p = L->p;
	const struct prof_process *ref = NULL;
	size_t i, nranks = 0;
	int64_t ref_skew, ref_off;

	for (i = 0; i < p->nprocesses; i++) {
		const struct prof_process *pr = &p->processes[i];

		if (pr->rank.rank < 0)
			continue;
		nranks++;
		if (!ref || pr->rank.rank < ref->rank.rank ||
		    (pr->rank.rank == ref->rank.rank && pr->start < ref->start))
			ref = pr;
	}
	if (!ref)
		return;
	/* the reference's own offset (non-zero only when the ping-pong's
	 * reference rank was filtered out by --ranks) */
	ref_off = (int64_t)prof_rank_time(p, (uint32_t)(ref - p->processes), ref->start) -
		  (int64_t)ref->start;
	ref_skew = (int64_t)ref->start_real_ns - (int64_t)ref->start;
	for (i = 0; i < p->nprocesses; i++) {
		struct prof_process *pr = &p->processes[i];
		struct prof_rank_proc *pk = &pr->rank;

		if (pk->rank < 0 || pk->clock_source == PROF_CLOCK_MPI)
			continue;
		if (nranks == 1) {
			pk->clock_source = PROF_CLOCK_NONE;
		} else if (ref->rank.host && pk->host && pk->host[0] &&
			   strcmp(pk->host, ref->rank.host) == 0) {
			/* one CLOCK_MONOTONIC on one host: the same clock,
			 * offset as the reference's (0 but under --ranks) */
			pk->clock_source = ref_off ? PROF_CLOCK_MPI : PROF_CLOCK_SAME_HOST;
			pk->clock_t0 = pk->clock_t1 = 0;
			pk->clock_offset0 = pk->clock_offset1 = ref_off;
			pk->clock_uncertainty = ref->rank.clock_uncertainty;
		} else {
			/* CLOCK_REALTIME at start on both hosts: as good as their
			 * NTP, which we cannot know */
			pk->clock_source = PROF_CLOCK_REALTIME;
			pk->clock_t0 = pk->clock_t1 = 0;
			pk->clock_offset0 = (int64_t)pr->start_real_ns - (int64_t)pr->start -
					    ref_skew + ref_off;
			pk->clock_offset1 = pk->clock_offset0;
			pk->clock_uncertainty = UINT64_MAX;
		}
	}
}

/* --- --ranks ---------------------------------------------------------------- */

/* Walk "0-3,7": 1 if rank is in it, 0 if not, -1 (err set) when the list is
 * not one.  rank < 0: only check the list. */
int prof_ranks_match(const char *list, int32_t rank, char *err, size_t errlen)
{
	const char *s = list;
	int hit = 0;

	if (!s || !*s)
		goto bad;
	for (;;) {
		char *end;
		long a, b;

		if (*s < '0' || *s > '9')
			goto bad;
		errno = 0;
		a = strtol(s, &end, 10);
		if (errno || a > INT32_MAX)
			goto bad;
		b = a;
		s = end;
		if (*s == '-') {
			s++;
			if (*s < '0' || *s > '9')
				goto bad;
			b = strtol(s, &end, 10);
			if (errno || b > INT32_MAX || b < a)
				goto bad;
			s = end;
		}
		if (rank >= a && rank <= b)
			hit = 1;
		if (*s == '\0')
			return hit;
		if (*s != ',')
			goto bad;
		s++;
	}
bad:
	if (errlen)
		snprintf(err, errlen, "--ranks %s: expected ranks and ranges such as 0-3,7",
			 list ? list : "");
	return -1;
}
