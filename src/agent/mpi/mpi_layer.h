/*
 * mpi_layer.h — shared by the files of libcbottleneck_mpi.so (mpi.c, wrap.c,
 * clock.c): the PMPI functions looked up at run time, the state of one call
 * being recorded, and the helpers that fill it.  Internal; normal context.
 */
#ifndef CBN_MPI_LAYER_H
#define CBN_MPI_LAYER_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "agent_api.h"
#include "cbn_format.h"
#include "cbn_mpi.h"

#define MPI_HIDDEN __attribute__((visibility("hidden")))
#define MPI_EXPORT __attribute__((visibility("default")))

/* Frames of the host call site kept per record, and the duration from which
 * a call's whole stack is unwound even at a known site (mpi.c). */
#define MPI_FRAMES 24
#define MPI_STACK_NS 1000000ull

/* Every PMPI function the library calls: one cached pointer each. */
#define MPI_PMPI_NAMES(X)                                                           \
	X(Init) X(Init_thread) X(Finalize) X(Send) X(Ssend) X(Bsend) X(Rsend) X(Recv)  \
	X(Isend) X(Issend) X(Irecv) X(Sendrecv) X(Sendrecv_replace) X(Probe) X(Iprobe) \
	X(Barrier) X(Bcast) X(Reduce) X(Allreduce) X(Gather) X(Gatherv) X(Scatter)     \
	X(Scatterv) X(Allgather) X(Allgatherv) X(Alltoall) X(Alltoallv)                \
	X(Reduce_scatter) X(Reduce_scatter_block) X(Scan) X(Exscan) X(Ibarrier)        \
	X(Ibcast) X(Ireduce) X(Iallreduce) X(Iallgather) X(Ialltoall) X(Put) X(Get)    \
	X(Accumulate) X(Win_fence) X(Win_lock) X(Win_unlock) X(Win_flush) X(Wait)      \
	X(Waitall) X(Waitany) X(Waitsome) X(Test) X(Testall) X(Testany) X(Testsome)    \
	X(Comm_free) X(Win_free) X(Type_size) X(Get_count) X(Comm_group)               \
	X(Group_translate_ranks) X(Group_free) X(Group_size) X(Group_rank)             \
	X(Win_get_group) X(Get_library_version) X(Comm_rank) X(Comm_size) X(Comm_dup)

#define MPI_SLOT_DECL(name) extern _Atomic(void *) mpi_slot_##name MPI_HIDDEN;
MPI_PMPI_NAMES(MPI_SLOT_DECL)
#undef MPI_SLOT_DECL

void *mpi_real(_Atomic(void *) *slot, const char *name) MPI_HIDDEN;
#define MPI_PMPI(name) mpi_real(&mpi_slot_##name, "PMPI_" #name)
/* `f`, the PMPI function of that name; without one, return fail. */
#define PMPI_FN_OR(name, fail)                                                      \
	__typeof__(&PMPI_##name) f = (__typeof__(&PMPI_##name))MPI_PMPI(name);      \
	if (!f)                                                                     \
		return fail
#define PMPI_FN_VOID(name)                                                          \
	__typeof__(&PMPI_##name) f = (__typeof__(&PMPI_##name))MPI_PMPI(name);      \
	if (!f)                                                                     \
	return

/* Open MPI's predefined handles, looked up at run time (NULL before libmpi). */
MPI_Comm mpi_world(void) MPI_HIDDEN;
MPI_Datatype mpi_byte(void) MPI_HIDDEN;
MPI_Request mpi_request_null(void) MPI_HIDDEN;

/* One call being recorded. */
struct mpi_call {
	uint64_t t0, sent, recv;
	uint64_t site;                   /* the wrapper's return address: the call site */
	int32_t peer, tag;
	uint32_t comm, seq, count;
	int32_t comm_size, me;           /* me: our rank in comm, -1 unknown */
	uint16_t flags;                  /* CBN_MPI_F_* */
	int poll;                        /* completed nothing: count, do not record */
	int err;                         /* errno after the PMPI call */
};

/* 1: record this call (m filled, t0 taken); 0: pass straight through (no
 * session, or a call made from inside the library).  After 1, mpi_end must
 * follow. */
int mpi_begin(struct mpi_call *m) MPI_HIDDEN;
void mpi_end(int call, struct mpi_call *m, int ret) MPI_HIDDEN;
/* Around the library's own PMPI use outside a wrapper (clock.c). */
void mpi_enter_internal(void) MPI_HIDDEN;
void mpi_leave_internal(void) MPI_HIDDEN;

uint64_t mpi_bytes(MPI_Datatype dt, int count) MPI_HIDDEN;
uint64_t mpi_bytes_v(MPI_Datatype dt, const int *counts, int n) MPI_HIDDEN;
uint64_t mpi_status_bytes(const MPI_Status *st, MPI_Datatype dt) MPI_HIDDEN;
int32_t mpi_peer(int rank) MPI_HIDDEN;
/* comm id, size, our rank; coll: count one more collective on it (seq). */
void mpi_comm(MPI_Comm c, int coll, struct mpi_call *m) MPI_HIDDEN;
void mpi_win(MPI_Win w, struct mpi_call *m) MPI_HIDDEN;
void mpi_forget(void *key) MPI_HIDDEN;

void mpi_after_init(void) MPI_HIDDEN;
void mpi_after_finalize(void) MPI_HIDDEN;

/* clock.c: the offset exchange with rank 0 (CBN_CLOCK_AT_*). */
void mpi_clock_align(int at) MPI_HIDDEN;

#endif
