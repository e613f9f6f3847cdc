/*
 * test_dist.c — the distributed view (analysis/dist/dist.c) on hand-built
 * profiles of 4 ranks: rank 2 computes twice as long before each
 * MPI_Allreduce, rank 3 runs on another host whose clock is 5 ms behind.
 * Checks the exact late-arrival waits, compute per step, imbalance, the
 * straggler and its sentence, call sites (MPI frames skipped) and their COV,
 * collectives, histogram bins, late-sender wait, a collective that lacks a
 * rank, the clock interpolation of prof_rank_time, and the --ranks parser.
 */
#include <math.h>
#include <string.h>

#include "dist.h"
#include "load.h"
#include "format/cbn_format.h"
#include "format/cbn_mpi.h"
#include "testlib.h"

#define MS 1000000ull
#define NR 4
#define STEPS 4
#define W0 (10 * MS)             /* MPI_Init ends */
#define C (40 * MS)              /* compute per step, rank 2: 2 C */
#define X (10 * MS)              /* the allreduce's own time */
#define L (2 * C + X)            /* step length */
#define SKEW (5 * MS)            /* rank 3's clock: reference - 5 ms */

static struct prof_process procs[NR];
static struct prof_thread threads[NR];
static struct prof_func funcs[3] = {
	{"PMPI_Allreduce", "", 0, "libmpi.so.40", 0, 0, 0, NULL},
	{"step_loop", "train.c", 30, "train", 0, 0, 0, NULL},
	{"main", "train.c", 10, "train", 0, 0, 0, NULL},
};
static struct prof_frame frames[3] = {
	{0, 0, "", 0, 0x1000},
	{1, 42, "train.c", 0, 0x2000},
	{2, 12, "train.c", 0, 0x3000},
};
static struct prof_stack stacks[1] = {{.first = 0, .nframes = 3}};
static struct prof_mpi_call calls[64];

static struct prof_mpi_call *call(struct profile *p, uint32_t r, uint16_t c, uint64_t s,
				  uint64_t e)
{
	struct prof_mpi_call *m = &calls[p->nmpi_calls++];
	uint64_t sk = r == 3 ? SKEW : 0;

	memset(m, 0, sizeof(*m));
	m->process = r;
	m->thread = r;
	m->call = c;
	m->start = s - sk;
	m->end = e - sk;
	m->stack = 0;
	m->peer = CBN_MPI_PEER_NONE;
	m->comm_size = NR;
	return m;
}

/* variant 1: rank 1 misses the allreduce of step 2, and rank 1 receives from
 * rank 0 8 ms before the send starts */
static void build(struct profile *p, int variant)
{
	uint32_t r, k;

	memset(p, 0, sizeof(*p));
	memset(procs, 0, sizeof(procs));
	p->processes = procs;
	p->nprocesses = NR;
	p->threads = threads;
	p->nthreads = NR;
	p->funcs = funcs;
	p->nfuncs = 3;
	p->frames = frames;
	p->nframes = 3;
	p->stacks = stacks;
	p->nstacks = 1;
	p->mpi_calls = calls;
	for (r = 0; r < NR; r++) {
		struct prof_process *pr = &procs[r];
		uint64_t sk = r == 3 ? SKEW : 0;

		pr->pid = 100 + r;
		pr->start = 0 + 1 * MS - sk;
		pr->end = W0 + STEPS * L + 5 * MS - sk;
		pr->period_ns = MS;
		pr->weight = 300;
		pr->clean_exit = 1;
		pr->exited = 1;
		pr->rank.rank = (int32_t)r;
		pr->rank.local_rank = (int32_t)(r % 3);
		pr->rank.world_size = NR;
		pr->rank.source = CBN_RANK_OMPI;
		pr->rank.host = r == 3 ? "n1" : "n0";
		pr->rank.mpi_version = "Open MPI v4.1.4";
		pr->rank.clock_source = r == 3 ? PROF_CLOCK_MPI : PROF_CLOCK_SAME_HOST;
		if (r == 3) {
			/* one estimate: constant offset */
			pr->rank.clock_t0 = 1 * MS;
			pr->rank.clock_offset0 = (int64_t)SKEW;
			pr->rank.clock_uncertainty = 7000;
		}
		threads[r].tid = 100 + r;
		threads[r].process = r;
		call(p, r, CBN_MPI_Init, 1 * MS, W0);
		if (variant == 1 && r == 0) {
			struct prof_mpi_call *m = call(p, 0, CBN_MPI_Send, 20 * MS, 21 * MS);

			m->peer = 1;
			m->tag = 3;
			m->bytes_sent = 1000;
		}
		if (variant == 1 && r == 1) {
			struct prof_mpi_call *m = call(p, 1, CBN_MPI_Recv, 12 * MS, 21 * MS);

			m->peer = 0;
			m->tag = 3;
			m->bytes_recv = 70000;
		}
		for (k = 0; k < STEPS; k++) {
			uint64_t t = W0 + k * L, mine = r == 2 ? 2 * C : C;
			struct prof_mpi_call *m;

			if (variant == 1 && r == 1 && k == 2)
				continue;
			m = call(p, r, CBN_MPI_Allreduce, t + mine, t + 2 * C + X);
			m->seq = k + 1;
			m->bytes_sent = m->bytes_recv = 8;
		}
		call(p, r, CBN_MPI_Finalize, W0 + STEPS * L, W0 + STEPS * L + 1 * MS);
	}
	/* prof_mpi_call order: (process, start) */
	for (size_t i = 1; i < p->nmpi_calls; i++)
		for (size_t j = i; j > 0 && (calls[j - 1].process > calls[j].process ||
					     (calls[j - 1].process == calls[j].process &&
					      calls[j - 1].start > calls[j].start)); j--) {
			struct prof_mpi_call t = calls[j];

			calls[j] = calls[j - 1];
			calls[j - 1] = t;
		}
}

static const struct dist_collective *coll(const struct dist_analysis *d, const char *name)
{
	for (size_t i = 0; i < d->ncolls; i++)
		if (strcmp(d->colls[i].call, name) == 0)
			return &d->colls[i];
	return NULL;
}

static const struct dist_histogram *hist(const struct dist_analysis *d, const char *name)
{
	for (size_t i = 0; i < d->nhists; i++)
		if (strcmp(d->hists[i].call, name) == 0)
			return &d->hists[i];
	return NULL;
}

static void test_straggler(void)
{
	struct profile p;
	struct dist_analysis d;
	const struct dist_collective *c;
	uint32_t r;

	build(&p, 0);
	REQUIRE(dist_analyze(&p, NULL, &d) == 1);
	REQUIRE(d.nranks == NR);
	CHECK_EQ_INT(d.world_size, NR);
	CHECK_EQ_INT(d.missing, 0);
	CHECK_STR(d.mpi, "Open MPI v4.1.4");
	CHECK_EQ_INT(d.clock_uncertainty_ns, 7000);
	for (r = 0; r < NR; r++) {
		const struct dist_rank *k = &d.ranks[r];

		CHECK_EQ_INT(k->rank, r);
		CHECK_STR(k->device, ""); /* no GPU op */
		CHECK_EQ_INT(k->nsteps, STEPS);
		CHECK_EQ_INT(k->step_mean_ns, L);
		/* late arrival: exactly C per step for the others, none for 2 */
		CHECK_EQ_INT(k->mpi_wait_ns, r == 2 ? 0 : STEPS * C);
		CHECK_EQ_INT(k->mpi_ns, STEPS * (r == 2 ? X : C + X));
		CHECK_EQ_INT(k->compute_per_step_ns, r == 2 ? 2 * C : C);
		/* rank 3 on the reference clock despite its own being 5 ms behind */
		CHECK_EQ_INT(k->start, 1 * MS);
		CHECK_EQ_INT(k->clock_offset_ns, r == 3 ? (int64_t)SKEW : 0);
		CHECK(!k->split.gpu);
		CHECK_EQ_INT(k->split.communication_ns, k->mpi_ns);
	}
	CHECK(fabs(d.imbalance - 1.6) < 1e-9);
	CHECK_EQ_INT(d.straggler, 2);
	CHECK(fabs(d.straggler_ratio - 2.0) < 1e-9);
	CHECK_STR(d.straggler_call, "MPI_Allreduce");
	CHECK(fabs(d.straggler_wait_pct - 100.0 * C / L) < 1e-6);
	printf("imbalance %.3f, straggler rank %d ratio %.2f, others wait %.2f %% in %s\n",
	       d.imbalance, d.straggler, d.straggler_ratio, d.straggler_wait_pct,
	       d.straggler_call);
	/* one site: the MPI frame is skipped, the caller is step_loop:42 */
	REQUIRE(d.nsites == 1);
	CHECK_STR(d.sites[0].call, "MPI_Allreduce");
	CHECK_STR(d.sites[0].function, "step_loop");
	CHECK_STR(d.sites[0].file, "train.c");
	CHECK_EQ_INT(d.sites[0].line, 42);
	CHECK_EQ_INT(d.sites[0].calls, NR * STEPS);
	CHECK_EQ_INT(d.sites[0].wait_ns, 3 * STEPS * C);
	/* per-rank times 200, 200, 40, 200 ms: mean 160, sd 69.28 */
	CHECK(fabs(d.sites[0].cov - sqrt(4800.0) / 160.0) < 1e-9);
	CHECK(fabs(d.sites[0].mpi_pct - 100.0) < 1e-9);
	printf("site %s %s:%u COV %.3f\n", d.sites[0].call, d.sites[0].file, d.sites[0].line,
	       d.sites[0].cov);
	c = coll(&d, "MPI_Allreduce");
	REQUIRE(c);
	CHECK_EQ_INT(c->instances, STEPS);
	CHECK_EQ_INT(c->unmatched, 0);
	CHECK_EQ_INT(c->wait_ns, 3 * STEPS * C);
	CHECK_EQ_INT(c->transfer_ns, c->time_ns - c->wait_ns);
	CHECK_EQ_INT(c->latest_rank, 2);
	CHECK_EQ_INT(c->latest_count, STEPS);
	REQUIRE(hist(&d, "MPI_Allreduce"));
	CHECK_EQ_INT(hist(&d, "MPI_Allreduce")->count[0], NR * STEPS);
	/* the rules */
	REQUIRE(d.nfindings >= 2);
	CHECK_STR(d.findings[0].id, "dist-straggler");
	CHECK(strstr(d.findings[0].evidence, "rank 2 computes 2.0x the median; ranks 0,1,3 spend "
					     "44 % of the step in MPI_Allreduce") != NULL);
	printf("evidence: %s\n", d.findings[0].evidence);
	CHECK_STR(d.findings[1].id, "dist-imbalance");
	dist_free(&d);
}

static void test_missing_and_late_sender(void)
{
	struct profile p;
	struct dist_analysis d;
	const struct dist_collective *c;
	const struct dist_histogram *h;

	build(&p, 1);
	REQUIRE(dist_analyze(&p, NULL, &d) == 1);
	c = coll(&d, "MPI_Allreduce");
	REQUIRE(c);
	/* seq 2 lacks rank 1: its three calls are unmatched, the others match */
	CHECK_EQ_INT(c->instances, STEPS - 1);
	CHECK_EQ_INT(c->unmatched, 3);
	/* ... and ranks 0 and 3 still waited for rank 2 there */
	CHECK_EQ_INT(c->wait_ns, 3 * (STEPS - 1) * C + 2 * C);
	/* the receive waited from 12 ms to the send's start at 20 ms */
	CHECK_EQ_INT(d.ranks[1].mpi_wait_ns, (STEPS - 1) * C + 8 * MS);
	h = hist(&d, "MPI_Recv");
	REQUIRE(h);
	CHECK_EQ_INT(h->count[6], 1); /* 70000 B: <= 256 KiB */
	h = hist(&d, "MPI_Send");
	REQUIRE(h);
	CHECK_EQ_INT(h->count[2], 1); /* 1000 B: <= 1 KiB */
	printf("with rank 1 missing at seq 2: %llu instances, %llu unmatched; late sender 8 ms\n",
	       (unsigned long long)c->instances, (unsigned long long)c->unmatched);
	dist_free(&d);
}

static void test_balanced_and_none(void)
{
	struct profile p;
	struct dist_analysis d;

	build(&p, 0);
	/* everyone as fast as rank 0: no straggler */
	for (size_t i = 0; i < p.nmpi_calls; i++)
		if (calls[i].process == 2 && calls[i].call == CBN_MPI_Allreduce)
			calls[i].start -= C;
	REQUIRE(dist_analyze(&p, NULL, &d) == 1);
	CHECK(d.imbalance < 1.10);
	CHECK_EQ_INT(d.straggler, -1);
	dist_free(&d);
	for (uint32_t r = 0; r < NR; r++)
		procs[r].rank.rank = -1;
	CHECK_EQ_INT(dist_analyze(&p, NULL, &d), 0);
}

static void test_rank_time(void)
{
	struct profile p;
	struct prof_process pr[1];

	memset(&p, 0, sizeof(p));
	memset(pr, 0, sizeof(pr));
	p.processes = pr;
	p.nprocesses = 1;
	pr[0].rank.rank = 1;
	pr[0].rank.clock_source = PROF_CLOCK_MPI;
	pr[0].rank.clock_t0 = 1000;
	pr[0].rank.clock_t1 = 2000;
	pr[0].rank.clock_offset0 = 100;
	pr[0].rank.clock_offset1 = 300;
	CHECK_EQ_INT(prof_rank_time(&p, 0, 500), 600);   /* before: the first offset */
	CHECK_EQ_INT(prof_rank_time(&p, 0, 1500), 1700); /* between: linear */
	CHECK_EQ_INT(prof_rank_time(&p, 0, 3000), 3300); /* after: the last offset */
	pr[0].rank.clock_source = PROF_CLOCK_SAME_HOST;
	CHECK_EQ_INT(prof_rank_time(&p, 0, 1500), 1500);
	CHECK_EQ_INT(prof_rank_time(&p, 5, 1500), 1500); /* no such process */
}

static void test_ranks_parse(void)
{
	char err[160];

	CHECK_EQ_INT(prof_ranks_match("0-3,7", 0, err, sizeof(err)), 1);
	CHECK_EQ_INT(prof_ranks_match("0-3,7", 3, err, sizeof(err)), 1);
	CHECK_EQ_INT(prof_ranks_match("0-3,7", 7, err, sizeof(err)), 1);
	CHECK_EQ_INT(prof_ranks_match("0-3,7", 4, err, sizeof(err)), 0);
	CHECK_EQ_INT(prof_ranks_match("12", 12, err, sizeof(err)), 1);
	CHECK_EQ_INT(prof_ranks_match("0-3,7", -1, err, sizeof(err)), 0);
	CHECK_EQ_INT(prof_ranks_match("", 0, err, sizeof(err)), -1);
	CHECK_EQ_INT(prof_ranks_match("a", 0, err, sizeof(err)), -1);
	CHECK_EQ_INT(prof_ranks_match("3-1", 0, err, sizeof(err)), -1);
	CHECK_EQ_INT(prof_ranks_match("1,", 0, err, sizeof(err)), -1);
	CHECK_EQ_INT(prof_ranks_match("1-", 0, err, sizeof(err)), -1);
	CHECK_EQ_INT(prof_ranks_match("-1", 0, err, sizeof(err)), -1);
	CHECK_EQ_INT(prof_ranks_match("1 ,2", 0, err, sizeof(err)), -1);
	CHECK(strstr(err, "--ranks 1 ,2: expected") != NULL);
}

int main(void)
{
	test_straggler();
	test_missing_and_late_sender();
	test_balanced_and_none();
	test_rank_time();
	test_ranks_parse();
	return test_result();
}
