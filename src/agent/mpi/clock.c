/*
 * clock.c — each rank's clock against rank 0's (docs/distributed.md, "Clock
 * alignment"): at MPI_Init and MPI_Finalize, on a private duplicate of
 * MPI_COMM_WORLD, rank 0 answers CLOCK_ROUNDS ping-pongs from each other rank
 * in turn; each rank keeps the round with the least round trip and writes one
 * CBN_REC_CLOCK.  O(ranks) messages, all through PMPI (never recorded).
 */
#include <string.h>
#include <time.h>

#include "mpi_layer.h"

#define CLOCK_ROUNDS 10
#define CLOCK_TAG 0x6362 /* "cb": on our own communicator, so any tag will do */

static uint64_t clock_real_at(uint64_t mono)
{
	struct timespec r, m;
	uint64_t rn, mn;

	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m);
	rn = (uint64_t)r.tv_sec * 1000000000ull + (uint64_t)r.tv_nsec;
	mn = (uint64_t)m.tv_sec * 1000000000ull + (uint64_t)m.tv_nsec;
	return rn - (mn - mono);
}

static void clock_write(int at, uint64_t local, int64_t offset, uint64_t rtt, uint32_t rounds)
{
	struct cbn_rec_clock r;

	memset(&r, 0, sizeof(r));
	r.h.type = CBN_REC_CLOCK;
	r.h.flags = (uint16_t)at;
	r.h.size = sizeof(r);
	r.local = local;
	r.offset = offset;
	r.rtt = rtt;
	r.real = clock_real_at(local);
	r.ref_rank = 0;
	r.rounds = rounds;
	cbn_agent_write(&r, sizeof(r));
}

void mpi_clock_align(int at)
{
	__typeof__(&PMPI_Comm_dup) dup = (__typeof__(&PMPI_Comm_dup))MPI_PMPI(Comm_dup);
	__typeof__(&PMPI_Comm_free) cfree = (__typeof__(&PMPI_Comm_free))MPI_PMPI(Comm_free);
	__typeof__(&PMPI_Comm_rank) crank = (__typeof__(&PMPI_Comm_rank))MPI_PMPI(Comm_rank);
	__typeof__(&PMPI_Comm_size) csize = (__typeof__(&PMPI_Comm_size))MPI_PMPI(Comm_size);
	__typeof__(&PMPI_Send) send = (__typeof__(&PMPI_Send))MPI_PMPI(Send);
	__typeof__(&PMPI_Recv) recv = (__typeof__(&PMPI_Recv))MPI_PMPI(Recv);
	MPI_Datatype byte = mpi_byte();
	MPI_Comm c;
	int me, n, r, i, ok = 1;

	if (!dup || !cfree || !crank || !csize || !send || !recv || !byte || !mpi_world() ||
	    !cbn_agent_rank_state())
		return;
	mpi_enter_internal();
	/* Collective: every rank gets here (MPI_Init and MPI_Finalize are). */
	if (dup(mpi_world(), &c) != MPI_SUCCESS)
		goto out;
	if (crank(c, &me) != MPI_SUCCESS || csize(c, &n) != MPI_SUCCESS) {
		cfree(&c);
		goto out;
	}
	if (me == 0) {
		for (r = 1; r < n && ok; r++) {
			for (i = 0; i < CLOCK_ROUNDS && ok; i++) {
				uint64_t now;

				ok = recv(NULL, 0, byte, r, CLOCK_TAG, c, MPI_STATUS_IGNORE) ==
				     MPI_SUCCESS;
				now = cbn_agent_now();
				ok = ok && send(&now, (int)sizeof(now), byte, r, CLOCK_TAG, c) ==
						   MPI_SUCCESS;
			}
		}
		clock_write(at, cbn_agent_now(), 0, 0, 0);
	} else {
		uint64_t best = UINT64_MAX, mid = 0, ref = 0;

		for (i = 0; i < CLOCK_ROUNDS && ok; i++) {
			uint64_t t0 = cbn_agent_now(), t1, theirs = 0;

			ok = send(NULL, 0, byte, 0, CLOCK_TAG, c) == MPI_SUCCESS &&
			     recv(&theirs, (int)sizeof(theirs), byte, 0, CLOCK_TAG, c,
				  MPI_STATUS_IGNORE) == MPI_SUCCESS;
			t1 = cbn_agent_now();
			if (ok && t1 - t0 < best) {
				best = t1 - t0;
				mid = t0 + best / 2;
				ref = theirs;
			}
		}
		/* rank 0 read its clock at our mid-point, give or take rtt/2. */
		if (best != UINT64_MAX)
			clock_write(at, mid, (int64_t)(ref - mid), best, (uint32_t)i);
	}
	cfree(&c);
out:
	mpi_leave_internal();
}
