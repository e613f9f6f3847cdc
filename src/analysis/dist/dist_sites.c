/*
 * dist_sites.c — the mpiP-style view of a distributed run: MPI call sites
 * (the first frame outside MPI and its wrappers) with their time, wait and
 * bytes per rank, and the histograms of message sizes.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dist_int.h"

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

int dist_sites(struct dist_work *w)
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
		if (ri < 0 || dist_is_env(c->call))
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

int dist_histograms(struct dist_work *w)
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

		if (m->call >= CBN_MPI_CALL_MAX || w->procrank[m->process] < 0 || dist_is_env(m->call))
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

