/*
 * dist.c — the distributed view (dist.h, docs/distributed.md "The merged
 * report"): the ranks of the profile, their wall, CPU, GPU, MPI and compute
 * time, steps, the late-arrival wait of collectives matched across ranks by
 * (comm, seq) and the late-sender wait of blocking receives, load imbalance
 * and the straggler, mpiP-style call sites, collectives and message sizes.
 * Every comparison across ranks is on the reference clock (prof_rank_time).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../format/cbn_format.h"
#include "../format/cbn_mpi.h"
#include "analysis.h"
#include "dist_int.h"
#include "load.h"
#include "steps.h"
#include "util.h"

/* Working state of one dist_analyze(). */
struct dist_work {
	const struct profile *p;
	const struct analysis *a;
	struct dist_analysis *d;
	int32_t *procrank;           /* process -> index into d->ranks, -1 */
	uint64_t *wait;              /* per MPI call: its late-arrival / late-sender wait */
	uint32_t *site;              /* per MPI call: index into d->sites, UINT32_MAX none */
	uint64_t *call_rank_wait;    /* [call * nranks + r] */
	uint32_t *call_rank_count;   /* [call * nranks + r] collectives */
	uint32_t *call_rank_latest;  /* [call * nranks + r] groups where r arrived last */
	uint64_t late_sender_ns;
};

static uint64_t ref_time(const struct profile *p, uint32_t proc, uint64_t t)
{
	return prof_rank_time(p, proc, t);
}

static int is_env(unsigned call)
{
	return cbn_mpi_call_kind(call) == CBN_MPI_KIND_ENV;
}

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
		v[n].start = ref_time(p, (uint32_t)i, p->processes[i].start);
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
		uint64_t s = v[i].start, e = ref_time(p, v[i].proc, pr->end);

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
			r->crashed = !pr->clean_exit;
			r->start = s;
			r->end = e;
			r->clock_source = pk->clock_source;
			r->clock_offset_ns = (int64_t)ref_time(p, v[i].proc, pr->start) -
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
		s = ref_time(p, c->process, c->start);
		e = ref_time(p, c->process, c->end);
		if (is_env(c->call)) {
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

static int collectives(struct dist_work *w, struct dist_collective *percall)
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
			uint64_t t = ref_time(p, c->process, c->start);

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
			uint64_t t = ref_time(p, c->process, c->start), wt = last - t;

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
static int late_senders(struct dist_work *w)
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
		ts = ref_time(p, cs->process, cs->start);
		tr = ref_time(p, cr->process, cr->start);
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

/* --- call sites ------------------------------------------------------------------ */

/* Frames of MPI itself and of our wrappers are not the user's call site. */
static int frame_is_mpi(const struct profile *p, const struct prof_frame *f)
{
	const char *m = f->func < p->nfuncs ? p->funcs[f->func].module : NULL;
	const char *n = f->func < p->nfuncs ? p->funcs[f->func].name : NULL;

	if (n && (strncmp(n, "MPI_", 4) == 0 || strncmp(n, "PMPI_", 5) == 0 ||
		  strncmp(n, "cbn_", 4) == 0))
		return 1;
	return m && (strstr(m, "libmpi") || strstr(m, "libcbottleneck") ||
		     strstr(m, "libopen-pal") || strstr(m, "libopen-rte") || strstr(m, "mca_"));
}

static const struct prof_frame *site_frame(const struct profile *p, uint32_t stack)
{
	const struct prof_stack *st;
	uint32_t k;

	if (stack >= p->nstacks)
		return NULL;
	st = &p->stacks[stack];
	for (k = 0; k < st->nframes; k++) {
		const struct prof_frame *f = &p->frames[st->first + k];

		if (!frame_is_mpi(p, f))
			return f;
	}
	return NULL;
}

static int site_cmp(const void *a, const void *b)
{
	const struct dist_site *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns > y->time_ns ? -1 : 1;
	if (strcmp(x->call, y->call))
		return strcmp(x->call, y->call);
	return strcmp(x->function, y->function);
}

static int sites(struct dist_work *w)
{
	const struct profile *p = w->p;
	struct dist_analysis *d = w->d;
	size_t i, cap = 0, k;
	uint64_t *per_rank;
	uint32_t *order;
	size_t last = SIZE_MAX;

	for (i = 0; i < p->nmpi_calls; i++) {
		const struct prof_mpi_call *c = &p->mpi_calls[i];
		int32_t ri = c->process < p->nprocesses ? w->procrank[c->process] : -1;
		const struct prof_frame *f;
		const char *fn, *file;
		uint32_t line;
		struct dist_site *st;

		w->site[i] = UINT32_MAX;
		if (ri < 0 || is_env(c->call))
			continue;
		f = site_frame(p, c->stack);
		fn = f && f->func < p->nfuncs ? p->funcs[f->func].name : "[no call site]";
		file = f && f->file ? f->file : "";
		line = f ? f->line : 0;
		/* calls of one site come in runs: try the last one first */
		k = last;
		if (k == SIZE_MAX || strcmp(d->sites[k].call, cbn_mpi_call_name(c->call)) ||
		    d->sites[k].function != fn || d->sites[k].line != line ||
		    strcmp(d->sites[k].file, file)) {
			for (k = 0; k < d->nsites; k++)
				if (d->sites[k].line == line &&
				    strcmp(d->sites[k].call, cbn_mpi_call_name(c->call)) == 0 &&
				    strcmp(d->sites[k].function, fn) == 0 &&
				    strcmp(d->sites[k].file, file) == 0)
					break;
		}
		if (k == d->nsites) {
			if (d->nsites == cap) {
				size_t nc = cap ? cap * 2 : 16;
				struct dist_site *ns = realloc(d->sites, nc * sizeof(*ns));

				if (!ns)
					return -ENOMEM;
				d->sites = ns;
				cap = nc;
			}
			st = &d->sites[d->nsites++];
			memset(st, 0, sizeof(*st));
			st->call = cbn_mpi_call_name(c->call);
			st->function = fn;
			st->file = file;
			st->line = line;
		}
		last = k;
		st = &d->sites[k];
		w->site[i] = (uint32_t)k;
		st->calls++;
		st->time_ns += c->end - c->start;
		if (c->end - c->start > st->max_ns)
			st->max_ns = c->end - c->start;
		st->bytes += c->bytes_sent + c->bytes_recv;
		st->wait_ns += w->wait[i];
	}
	if (!d->nsites)
		return 0;
	/* COV of each site's time across the ranks that called it */
	per_rank = calloc(d->nsites * d->nranks, sizeof(*per_rank));
	order = malloc(d->nsites * sizeof(*order));
	if (!per_rank || !order) {
		free(per_rank);
		free(order);
		return -ENOMEM;
	}
	for (i = 0; i < p->nmpi_calls; i++) {
		const struct prof_mpi_call *c = &p->mpi_calls[i];

		if (w->site[i] != UINT32_MAX)
			per_rank[(size_t)w->site[i] * d->nranks + (size_t)w->procrank[c->process]] +=
				c->end - c->start;
	}
	for (k = 0; k < d->nsites; k++) {
		struct dist_site *st = &d->sites[k];
		const uint64_t *t = per_rank + k * d->nranks;
		double sum = 0, sq = 0, mean;
		size_t n = 0, r;

		for (r = 0; r < d->nranks; r++)
			if (t[r]) {
				sum += (double)t[r];
				n++;
			}
		mean = n ? sum / (double)n : 0;
		for (r = 0; r < d->nranks; r++)
			if (t[r])
				sq += ((double)t[r] - mean) * ((double)t[r] - mean);
		st->cov = n > 1 && mean > 0 ? sqrt(sq / (double)n) / mean : 0;
		st->app_pct = d->app_ns ? 100.0 * (double)st->time_ns / (double)d->app_ns : 0;
		st->mpi_pct = d->mpi_ns ? 100.0 * (double)st->time_ns / (double)d->mpi_ns : 0;
	}
	free(per_rank);
	free(order);
	qsort(d->sites, d->nsites, sizeof(*d->sites), site_cmp);
	return 0;
}

/* --- message sizes ------------------------------------------------------------- */

/* bin 0: <= 64 B; bin i: <= 64 x 4^i; the last: the rest */
static unsigned hist_bin(uint64_t bytes)
{
	uint64_t le = 64;
	unsigned b;

	for (b = 0; b + 1 < DIST_HIST_BINS; b++, le *= 4)
		if (bytes <= le)
			return b;
	return DIST_HIST_BINS - 1;
}

static int histograms(struct dist_work *w)
{
	const struct profile *p = w->p;
	struct dist_analysis *d = w->d;
	struct dist_histogram h[CBN_MPI_CALL_MAX];
	uint8_t moved[CBN_MPI_CALL_MAX] = {0};
	size_t i, n = 0;
	unsigned c;

	memset(h, 0, sizeof(h));
	for (i = 0; i < p->nmpi_calls; i++) {
		const struct prof_mpi_call *m = &p->mpi_calls[i];

		if (m->call >= CBN_MPI_CALL_MAX || w->procrank[m->process] < 0 || is_env(m->call))
			continue;
		h[m->call].count[hist_bin(m->bytes_sent + m->bytes_recv)]++;
		if (m->bytes_sent + m->bytes_recv)
			moved[m->call] = 1;
	}
	for (c = 0; c < CBN_MPI_CALL_MAX; c++)
		n += moved[c];
	if (!n)
		return 0;
	d->hists = calloc(n, sizeof(*d->hists));
	if (!d->hists)
		return -ENOMEM;
	for (c = 0; c < CBN_MPI_CALL_MAX; c++) {
		if (!moved[c])
			continue;
		d->hists[d->nhists] = h[c];
		d->hists[d->nhists++].call = cbn_mpi_call_name(c);
	}
	return 0;
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
			e = ref_time(p, c->process, c->end);
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
		if (is_env(c->call) || e <= s)
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

static int splits(struct dist_work *w)
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
	if ((ret = collectives(&w, percall)) < 0 || (ret = late_senders(&w)) < 0)
		goto out;
	for (i = 0; i < p->nmpi_calls; i++)
		if (w.procrank[p->mpi_calls[i].process] >= 0)
			out->ranks[w.procrank[p->mpi_calls[i].process]].mpi_wait_ns += w.wait[i];
	if ((ret = sites(&w)) < 0 || (ret = histograms(&w)) < 0 ||
	    (ret = colls_keep(&w, percall)) < 0)
		goto out;
	steps_of_ranks(&w, win_start);
	if ((ret = balance(&w, win_start, win_end)) < 0 || (ret = splits(&w)) < 0 ||
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
