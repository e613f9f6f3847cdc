/*
 * cbn_mpi.h — the MPI calls libcbottleneck_mpi.so records (cbn_rec_mpi.call)
 * and their names and kinds, shared by the wrappers and the loader.  Never
 * renumber: values are in session files.
 */
#ifndef CBN_MPI_H
#define CBN_MPI_H

#include <stddef.h>

enum cbn_mpi_kind {
	CBN_MPI_KIND_P2P = 1,            /* point-to-point */
	CBN_MPI_KIND_COLL = 2,           /* collective (blocking or not) */
	CBN_MPI_KIND_RMA = 3,            /* one-sided */
	CBN_MPI_KIND_WAIT = 4,           /* completion: wait/test family */
	CBN_MPI_KIND_ENV = 5,            /* init/finalize and the like */
};

#define CBN_MPI_CALLS(X)                                                            \
	X(1, Init, ENV)                                                             \
	X(2, Init_thread, ENV)                                                      \
	X(3, Finalize, ENV)                                                         \
	X(10, Send, P2P)                                                            \
	X(11, Ssend, P2P)                                                           \
	X(12, Bsend, P2P)                                                           \
	X(13, Rsend, P2P)                                                           \
	X(14, Recv, P2P)                                                            \
	X(15, Isend, P2P)                                                           \
	X(16, Issend, P2P)                                                          \
	X(17, Irecv, P2P)                                                           \
	X(18, Sendrecv, P2P)                                                        \
	X(19, Sendrecv_replace, P2P)                                                \
	X(20, Probe, P2P)                                                           \
	X(21, Iprobe, P2P)                                                          \
	X(30, Barrier, COLL)                                                        \
	X(31, Bcast, COLL)                                                          \
	X(32, Reduce, COLL)                                                         \
	X(33, Allreduce, COLL)                                                      \
	X(34, Gather, COLL)                                                         \
	X(35, Gatherv, COLL)                                                        \
	X(36, Scatter, COLL)                                                        \
	X(37, Scatterv, COLL)                                                       \
	X(38, Allgather, COLL)                                                      \
	X(39, Allgatherv, COLL)                                                     \
	X(40, Alltoall, COLL)                                                       \
	X(41, Alltoallv, COLL)                                                      \
	X(42, Reduce_scatter, COLL)                                                 \
	X(43, Reduce_scatter_block, COLL)                                           \
	X(44, Scan, COLL)                                                           \
	X(45, Exscan, COLL)                                                         \
	X(46, Ibarrier, COLL)                                                       \
	X(47, Ibcast, COLL)                                                         \
	X(48, Ireduce, COLL)                                                        \
	X(49, Iallreduce, COLL)                                                     \
	X(50, Iallgather, COLL)                                                     \
	X(51, Ialltoall, COLL)                                                      \
	X(60, Put, RMA)                                                             \
	X(61, Get, RMA)                                                             \
	X(62, Accumulate, RMA)                                                      \
	X(63, Win_fence, RMA)                                                       \
	X(64, Win_lock, RMA)                                                        \
	X(65, Win_unlock, RMA)                                                      \
	X(66, Win_flush, RMA)                                                       \
	X(70, Wait, WAIT)                                                           \
	X(71, Waitall, WAIT)                                                        \
	X(72, Waitany, WAIT)                                                        \
	X(73, Waitsome, WAIT)                                                       \
	X(74, Test, WAIT)                                                           \
	X(75, Testall, WAIT)                                                        \
	X(76, Testany, WAIT)                                                        \
	X(77, Testsome, WAIT)

enum cbn_mpi_call {
#define CBN_MPI_ENUM(v, name, kind) CBN_MPI_##name = v,
	CBN_MPI_CALLS(CBN_MPI_ENUM)
#undef CBN_MPI_ENUM
	CBN_MPI_CALL_MAX = 78
};

/* "MPI_Allreduce", or NULL for a value no release wrote. */
static inline const char *cbn_mpi_call_name(unsigned call)
{
	switch (call) {
#define CBN_MPI_NAME(v, name, kind)                                                 \
	case v:                                                                     \
		return "MPI_" #name;
		CBN_MPI_CALLS(CBN_MPI_NAME)
#undef CBN_MPI_NAME
	}
	return NULL;
}

/* enum cbn_mpi_kind, 0 for an unknown call. */
static inline int cbn_mpi_call_kind(unsigned call)
{
	switch (call) {
#define CBN_MPI_KINDOF(v, name, kind)                                               \
	case v:                                                                     \
		return CBN_MPI_KIND_##kind;
		CBN_MPI_CALLS(CBN_MPI_KINDOF)
#undef CBN_MPI_KINDOF
	}
	return 0;
}

#endif
