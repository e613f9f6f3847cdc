/*
 * mpi_straggler — an MPI step loop with a known straggler and known traffic
 * (tests/e2e/mpi_ranks.sh, docs/distributed.md).  Each of STEPS steps, every
 * rank computes WORK_MS of CPU in compute() (rank 2 twice that), then
 * exchanges one ring message (MPI_Irecv of 1000 ints from rank-1, MPI_Send of
 * 1000 ints to rank+1, MPI_Wait), then MPI_Allreduce of 1024 doubles, and
 * marks the step with CBN_STEP().  Per rank and step: Send 4000 bytes,
 * Irecv 4000 bytes, Allreduce 8192 bytes each way.
 *   Usage: mpi_straggler [STEPS [WORK_MS [KILL_RANK KILL_STEP]]]
 * With KILL_RANK/KILL_STEP, that rank SIGKILLs itself at the start of that
 * step (0-based), after KILL_STEP complete steps.  Runs the same without
 * cbottleneck.
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "burn.h"
#include "cbottleneck.h"

#define RING_INTS 1000
#define REDUCE_DOUBLES 1024
#define STRAGGLER 2

__attribute__((noinline)) void compute(uint64_t ns)
{
	BURN_CPU(ns);
}

__attribute__((noinline)) void ring_exchange(int rank, int size, int *out, int *in)
{
	MPI_Request req;

	MPI_Irecv(in, RING_INTS, MPI_INT, (rank + size - 1) % size, 7, MPI_COMM_WORLD, &req);
	MPI_Send(out, RING_INTS, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
}

__attribute__((noinline)) void reduce_step(double *v, double *sum)
{
	MPI_Allreduce(v, sum, REDUCE_DOUBLES, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	burn_sink++; /* not a tail call: the call site stays in reduce_step() */
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 10;
	double work_ms = burn_arg(argc, argv, 2, 5.0);
	int kill_rank = argc > 4 ? atoi(argv[3]) : -1, kill_step = argc > 4 ? atoi(argv[4]) : -1;
	static int out[RING_INTS], in[RING_INTS];
	static double v[REDUCE_DOUBLES], sum[REDUCE_DOUBLES];
	int rank, size, s, i;
	double check = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (i = 0; i < RING_INTS; i++)
		out[i] = rank * RING_INTS + i;
	for (s = 0; s < steps; s++) {
		if (rank == kill_rank && s == kill_step)
			raise(SIGKILL);
		compute((uint64_t)(work_ms * 1e6) * (rank == STRAGGLER ? 2 : 1));
		ring_exchange(rank, size, out, in);
		for (i = 0; i < REDUCE_DOUBLES; i++)
			v[i] = rank + s + in[i % RING_INTS];
		reduce_step(v, sum);
		check += sum[0];
		CBN_STEP();
	}
	if (rank == 0)
		printf("mpi_straggler: %d ranks, %d steps, check %.0f, done\n", size, steps, check);
	MPI_Finalize();
	return 0;
}
