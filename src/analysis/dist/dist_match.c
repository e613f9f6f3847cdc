/*
 * dist_match.c — the wait that MPI calls matched across ranks reveal: the
 * late arrival at collectives matched by (comm, seq), and the late sender
 * of blocking receives matched to their send.
 */
#include <errno.h>
#include <stdlib.h>

#include "dist_int.h"

/* --- late arrival: collectives matched by (comm, seq) --------------------------- */

struct coll_key {
	uint32_t comm, seq;
	int32_t rank;
	uint32_t idx;            /* into p->mpi_calls */
};

static int coll_cmp(const void *a, const void *b)
{
	const struct coll_key *x = a, *y = b;

	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int dist_collectives(struct dist_work *w, struct dist_collective *percall)
{
	const struct profile *p = w->p;
	struct dist_analysis *d = w->d;
	struct coll_key *v;
	size_t i, j, n = 0;

	v = malloc((p->nmpi_calls ? p->nmpi_calls : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < p->nmpi_calls; i++) {
		const struct prof_mpi_call *c = &p->mpi_calls[i];
		int32_t ri = c->process < p->nprocesses ? w->procrank[c->process] : -1;
		struct dist_collective *pc;

		if (ri < 0 || cbn_mpi_call_kind(c->call) != CBN_MPI_KIND_COLL)
			continue;
		pc = &percall[c->call];
		pc->call = cbn_mpi_call_name(c->call);
		pc->time_ns += c->end - c->start;
		pc->bytes += c->bytes_sent + c->bytes_recv;
		w->call_rank_count[(size_t)c->call * d->nranks + (size_t)ri]++;
		if (!c->seq)
			continue;
		v[n].comm = c->comm;
		v[n].seq = c->seq;
		v[n].rank = ri;
		v[n].idx = (uint32_t)i;
		n++;
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), coll_cmp);
	for (i = 0; i < n; i = j) {
		const struct prof_mpi_call *c0 = &p->mpi_calls[v[i].idx];
		uint64_t last = 0;
		size_t expect, members;
		int32_t latest = -1;

		for (j = i; j < n && v[j].comm == v[i].comm && v[j].seq == v[i].seq; j++) {
			const struct prof_mpi_call *c = &p->mpi_calls[v[j].idx];
			uint64_t t = dist_ref_time(p, c->process, c->start);

			if (t >= last) {
				last = t;
				latest = v[j].rank;
			}
		}
		members = j - i;
		/* a rank's group: the communicator's size; WORLD: every rank */
		expect = c0->comm_size > 0 ? (size_t)c0->comm_size
					   : (c0->comm == 0 ? (size_t)d->world_size : members);
		if (members < expect)
			percall[c0->call].unmatched += members;
		else
			percall[c0->call].instances++;
		if (members < 2)
			continue;
		for (size_t k = i; k < j; k++) {
			const struct prof_mpi_call *c = &p->mpi_calls[v[k].idx];
			uint64_t t = dist_ref_time(p, c->process, c->start), wt = last - t;

			/* it waited from its arrival to the last one's, at most
			 * for as long as its own call lasted */
			if (wt > c->end - c->start)
				wt = c->end - c->start;
			w->wait[v[k].idx] = wt;
			percall[c->call].wait_ns += wt;
			w->call_rank_wait[(size_t)c->call * d->nranks + (size_t)v[k].rank] += wt;
		}
		if (latest >= 0)
			w->call_rank_latest[(size_t)c0->call * d->nranks + (size_t)latest]++;
	}
	free(v);
	return 0;
}

/* --- late sender: blocking receives matched to their send ------------------------ */

struct p2p_key {
	int32_t src, dst, tag;
	uint32_t idx;
	uint64_t start;          /* own clock: order within one process */
};

static int p2p_cmp(const void *a, const void *b)
{
	const struct p2p_key *x = a, *y = b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	if (x->tag != y->tag)
		return x->tag < y->tag ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int is_send(unsigned call)
{
	return call == CBN_MPI_Send || call == CBN_MPI_Ssend || call == CBN_MPI_Bsend ||
	       call == CBN_MPI_Rsend || call == CBN_MPI_Isend || call == CBN_MPI_Issend;
}

/* MPI's non-overtaking rule: on one communicator, messages from one sender
 * to one receiver with one tag arrive in the order sent, so the k-th receive
 * of (src, dst, tag) gets the k-th send.  Only MPI_COMM_WORLD (peers are
 * world ranks there) and MPI_Recv with a known source: MPI_Irecv + MPI_Wait
 * and sub-communicators are left out (docs). */
int dist_late_senders(struct dist_work *w)
{
	const struct profile *p = w->p;
	struct p2p_key *s, *r;
	size_t i, ns = 0, nr = 0, a = 0, b = 0;

	s = malloc((p->nmpi_calls ? p->nmpi_calls : 1) * sizeof(*s));
	r = malloc((p->nmpi_calls ? p->nmpi_calls : 1) * sizeof(*r));
	if (!s || !r) {
		free(s);
		free(r);
		return -ENOMEM;
	}
	for (i = 0; i < p->nmpi_calls; i++) {
		const struct prof_mpi_call *c = &p->mpi_calls[i];
		int32_t me = c->process < p->nprocesses ? p->processes[c->process].rank.rank : -1;

		if (me < 0 || c->comm != 0 || c->peer < 0)
			continue;
		if (is_send(c->call))
			s[ns++] = (struct p2p_key){me, c->peer, c->tag, (uint32_t)i, c->start};
		else if (c->call == CBN_MPI_Recv)
			r[nr++] = (struct p2p_key){c->peer, me, c->tag, (uint32_t)i, c->start};
	}
	if (ns > 1)
		qsort(s, ns, sizeof(*s), p2p_cmp);
	if (nr > 1)
		qsort(r, nr, sizeof(*r), p2p_cmp);
	while (a < ns && b < nr) {
		int k = s[a].src != r[b].src ? (s[a].src < r[b].src ? -1 : 1)
		      : s[a].dst != r[b].dst ? (s[a].dst < r[b].dst ? -1 : 1)
		      : s[a].tag != r[b].tag ? (s[a].tag < r[b].tag ? -1 : 1) : 0;
		const struct prof_mpi_call *cs, *cr;
		uint64_t ts, tr, wt;

		if (k < 0) {
			a++;
			continue;
		}
		if (k > 0) {
			b++;
			continue;
		}
		cs = &p->mpi_calls[s[a].idx];
		cr = &p->mpi_calls[r[b].idx];
		ts = dist_ref_time(p, cs->process, cs->start);
		tr = dist_ref_time(p, cr->process, cr->start);
		wt = ts > tr ? ts - tr : 0;
		if (wt > cr->end - cr->start)
			wt = cr->end - cr->start;
		w->wait[r[b].idx] += wt;
		w->late_sender_ns += wt;
		a++;
		b++;
	}
	free(s);
	free(r);
	return 0;
}

