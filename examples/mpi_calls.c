/*
 * mpi_calls — one of each kind of MPI call with known sizes, for exact byte
 * counts in the MPI records (tests/e2e/mpi_ranks.sh).  Run on 3 ranks; the
 * sizes per call and rank are listed in the test.  Prints "mpi_calls: done"
 * on rank 0.  Runs the same without cbottleneck.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
	static int ib[64], ob[64];
	static double db[64], dr[64];
	int rank, size, i, flag = 0, counts[3], displs[3], rcounts[3], rdispls[3];
	MPI_Request req, reqs[2];
	MPI_Status st;
	MPI_Comm half;
	MPI_Win win;
	struct timespec pause = {0, 20 * 1000 * 1000};

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 3) {
		if (rank == 0)
			fprintf(stderr, "mpi_calls: run on 3 ranks\n");
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < 64; i++) {
		ob[i] = i;
		db[i] = i;
	}
	MPI_Bcast(ib, 64, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Reduce(db, dr, 50, MPI_DOUBLE, MPI_SUM, 1, MPI_COMM_WORLD);
	if (rank == 1)
		MPI_Reduce(MPI_IN_PLACE, dr, 50, MPI_DOUBLE, MPI_SUM, 1, MPI_COMM_WORLD);
	else
		MPI_Reduce(db, NULL, 50, MPI_DOUBLE, MPI_SUM, 1, MPI_COMM_WORLD);
	MPI_Gather(ob, 10, MPI_INT, ib, 10, MPI_INT, 0, MPI_COMM_WORLD);
	for (i = 0; i < 3; i++) {
		counts[i] = i + 1;
		displs[i] = i * 4;
	}
	MPI_Gatherv(ob, rank + 1, MPI_INT, ib, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Scatter(ob, 5, MPI_INT, ib, 5, MPI_INT, 2, MPI_COMM_WORLD);
	MPI_Allgather(ob, 7, MPI_INT, ib, 7, MPI_INT, MPI_COMM_WORLD);
	MPI_Alltoall(ob, 2, MPI_INT, ib, 2, MPI_INT, MPI_COMM_WORLD);
	for (i = 0; i < 3; i++) {
		rcounts[i] = rank + 1; /* what each peer sends us: its count for us */
		rdispls[i] = i * 4;
	}
	MPI_Alltoallv(ob, counts, displs, MPI_INT, ib, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD);
	MPI_Reduce_scatter(ob, ib, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Reduce_scatter_block(ob, ib, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Scan(ob, ib, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Exscan(ob, ib, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Ibarrier(MPI_COMM_WORLD, &req);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	MPI_Iallreduce(db, dr, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &reqs[0]);
	reqs[1] = MPI_REQUEST_NULL;
	MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
	MPI_Sendrecv(ob, 6, MPI_INT, (rank + 1) % 3, 3, ib, 6, MPI_INT, (rank + 2) % 3, 3,
		     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	/* A receive from anyone, shorter than its buffer: the status tells. */
	if (rank == 1)
		MPI_Ssend(ob, 9, MPI_INT, 0, 4, MPI_COMM_WORLD);
	if (rank == 0)
		MPI_Recv(ib, 20, MPI_INT, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &st);
	/* Polls: rank 0 tests until rank 2's late message arrives; nothing
	 * ever comes with tag 99. */
	if (rank == 2) {
		nanosleep(&pause, NULL);
		MPI_Send(ob, 8, MPI_INT, 0, 5, MPI_COMM_WORLD);
	}
	if (rank == 0) {
		MPI_Iprobe(2, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
		MPI_Irecv(ib, 8, MPI_INT, 2, 5, MPI_COMM_WORLD, &req);
		do
			MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
		while (!flag);
	}
	/* One-sided: rank 0 puts 3 ints to 1, gets 2 from 2, accumulates 4 to 1. */
	MPI_Win_create(ib, 64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	MPI_Win_fence(0, win);
	if (rank == 0) {
		MPI_Put(ob, 3, MPI_INT, 1, 0, 3, MPI_INT, win);
		MPI_Get(ob + 10, 2, MPI_INT, 2, 0, 2, MPI_INT, win);
		MPI_Accumulate(ob, 4, MPI_INT, 1, 8, 4, MPI_INT, MPI_SUM, win);
	}
	MPI_Win_fence(0, win);
	MPI_Win_free(&win);
	/* A sub-communicator: ranks 0 and 2 share one id; rank 1 is alone. */
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	MPI_Allreduce(db, dr, 1, MPI_DOUBLE, MPI_SUM, half);
	MPI_Comm_free(&half);
	MPI_Barrier(MPI_COMM_SELF);
	if (rank == 0)
		printf("mpi_calls: done\n");
	MPI_Finalize();
	return 0;
}
