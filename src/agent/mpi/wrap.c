/*
 * wrap.c — the MPI_ functions libcbottleneck_mpi.so interposes (every call of
 * cbn_mpi.h).  Each calls its PMPI_ twin unchanged, so the program sees the
 * same return value, statuses and errno, then describes the call: bytes from
 * the datatype, peer or root, tag, communicator, collective seq, requests
 * completed.
 *
 * Bytes (per rank, what this rank sends and receives):
 *   - sends: count x type size; Recv, Sendrecv(_replace): what the status
 *     says arrived; Irecv: the posted count (its status is seen only by the
 *     wait, which knows no datatype), Wait* record bytes 0;
 *   - collectives: what this rank contributes and gets, e.g. Allreduce
 *     count x size both ways, Bcast sent at the root and received elsewhere,
 *     Gather(v) received at the root (the v-variants summed), MPI_IN_PLACE
 *     flagged and its side counted 0;
 *   - Put/Accumulate sent, Get received.
 * Polls that complete nothing (Test* with no request done, Iprobe with no
 * message) are counted in header.rank.mpi_polls/mpi_poll_ns, not recorded:
 * a progress loop would otherwise fill the file with empty calls.
 */
#include <errno.h>

#include "mpi_layer.h"

/* The PMPI call, then errno saved before our own work can touch it. */
#define CALL(expr)                                                                  \
	do {                                                                        \
		ret = (expr);                                                       \
		m.err = errno;                                                      \
	} while (0)

/* Pass straight through when not recording. */
#define PASS(name, ...)                                                             \
	PMPI_FN_OR(name, MPI_ERR_INTERN);                                           \
	struct mpi_call m;                                                          \
	int ret;                                                                    \
	if (!mpi_begin(&m))                                                         \
		return f(__VA_ARGS__);                                              \
	m.site = (uint64_t)(uintptr_t)__builtin_return_address(0);                  \
	CALL(f(__VA_ARGS__))

static int32_t status_source(const MPI_Status *st, int posted)
{
	if (st && posted == MPI_ANY_SOURCE)
		return mpi_peer(st->MPI_SOURCE);
	return mpi_peer(posted);
}

/* --- init and finalize ------------------------------------------------------ */

MPI_EXPORT int MPI_Init(int *argc, char ***argv)
{
	PASS(Init, argc, argv);
	mpi_end(CBN_MPI_Init, &m, ret);
	if (ret == MPI_SUCCESS) {
		mpi_after_init();
		mpi_clock_align(CBN_CLOCK_AT_INIT);
	}
	errno = m.err;
	return ret;
}

MPI_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	PASS(Init_thread, argc, argv, required, provided);
	mpi_end(CBN_MPI_Init_thread, &m, ret);
	if (ret == MPI_SUCCESS) {
		mpi_after_init();
		mpi_clock_align(CBN_CLOCK_AT_INIT);
	}
	errno = m.err;
	return ret;
}

MPI_EXPORT int MPI_Finalize(void)
{
	PMPI_FN_OR(Finalize, MPI_ERR_INTERN);
	struct mpi_call m;
	int ret;

	if (!mpi_begin(&m))
		return f();
	m.site = (uint64_t)(uintptr_t)__builtin_return_address(0);
	/* Before PMPI_Finalize, while the ranks can still talk; not part of
	 * the call's time. */
	mpi_clock_align(CBN_CLOCK_AT_FINALIZE);
	m.t0 = cbn_agent_now();
	CALL(f());
	mpi_end(CBN_MPI_Finalize, &m, ret);
	mpi_after_finalize();
	return ret;
}

/* --- point to point ---------------------------------------------------------- */

#define SEND_WRAP(name)                                                             \
	MPI_EXPORT int MPI_##name(const void *buf, int count, MPI_Datatype dt, int dest, \
				  int tag, MPI_Comm comm)                           \
	{                                                                           \
		PASS(name, buf, count, dt, dest, tag, comm);                        \
		m.sent = mpi_bytes(dt, count);                                      \
		m.peer = mpi_peer(dest);                                            \
		m.tag = tag;                                                        \
		mpi_comm(comm, 0, &m);                                              \
		mpi_end(CBN_MPI_##name, &m, ret);                                   \
		return ret;                                                         \
	}

SEND_WRAP(Send)
SEND_WRAP(Ssend)
SEND_WRAP(Bsend)
SEND_WRAP(Rsend)

#define ISEND_WRAP(name)                                                            \
	MPI_EXPORT int MPI_##name(const void *buf, int count, MPI_Datatype dt, int dest, \
				  int tag, MPI_Comm comm, MPI_Request *req)         \
	{                                                                           \
		PASS(name, buf, count, dt, dest, tag, comm, req);                   \
		m.sent = mpi_bytes(dt, count);                                      \
		m.peer = mpi_peer(dest);                                            \
		m.tag = tag;                                                        \
		mpi_comm(comm, 0, &m);                                              \
		mpi_end(CBN_MPI_##name, &m, ret);                                   \
		return ret;                                                         \
	}

ISEND_WRAP(Isend)
ISEND_WRAP(Issend)

MPI_EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag,
			MPI_Comm comm, MPI_Status *status)
{
	MPI_Status own;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;

	PASS(Recv, buf, count, dt, source, tag, comm, st);
	if (ret == MPI_SUCCESS)
		m.recv = mpi_status_bytes(st, dt);
	m.peer = ret == MPI_SUCCESS ? status_source(st, source) : mpi_peer(source);
	m.tag = ret == MPI_SUCCESS && tag == MPI_ANY_TAG ? st->MPI_TAG : tag;
	mpi_comm(comm, 0, &m);
	mpi_end(CBN_MPI_Recv, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int source, int tag,
			 MPI_Comm comm, MPI_Request *req)
{
	PASS(Irecv, buf, count, dt, source, tag, comm, req);
	m.recv = mpi_bytes(dt, count);
	m.peer = mpi_peer(source);
	m.tag = tag;
	mpi_comm(comm, 0, &m);
	mpi_end(CBN_MPI_Irecv, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest,
			    int stag, void *rbuf, int rcount, MPI_Datatype rtype, int source,
			    int rtag, MPI_Comm comm, MPI_Status *status)
{
	MPI_Status own;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;

	PASS(Sendrecv, sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm,
	     st);
	m.sent = mpi_bytes(stype, scount);
	if (ret == MPI_SUCCESS)
		m.recv = mpi_status_bytes(st, rtype);
	m.peer = mpi_peer(dest);
	m.tag = stag;
	mpi_comm(comm, 0, &m);
	mpi_end(CBN_MPI_Sendrecv, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag,
				    int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
	MPI_Status own;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;

	PASS(Sendrecv_replace, buf, count, dt, dest, stag, source, rtag, comm, st);
	m.sent = mpi_bytes(dt, count);
	if (ret == MPI_SUCCESS)
		m.recv = mpi_status_bytes(st, dt);
	m.peer = mpi_peer(dest);
	m.tag = stag;
	mpi_comm(comm, 0, &m);
	mpi_end(CBN_MPI_Sendrecv_replace, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	MPI_Status own;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;

	PASS(Probe, source, tag, comm, st);
	m.peer = ret == MPI_SUCCESS ? status_source(st, source) : mpi_peer(source);
	m.tag = tag;
	mpi_comm(comm, 0, &m);
	mpi_end(CBN_MPI_Probe, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
	MPI_Status own;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;

	PASS(Iprobe, source, tag, comm, flag, st);
	m.poll = ret == MPI_SUCCESS && flag && !*flag;
	m.peer = ret == MPI_SUCCESS && flag && *flag ? status_source(st, source) : mpi_peer(source);
	m.tag = tag;
	if (!m.poll)
		mpi_comm(comm, 0, &m);
	mpi_end(CBN_MPI_Iprobe, &m, ret);
	return ret;
}

/* --- collectives ------------------------------------------------------------- */

static uint64_t unless_inplace(const void *sbuf, struct mpi_call *m, uint64_t bytes)
{
	if (sbuf == MPI_IN_PLACE) {
		m->flags |= CBN_MPI_F_INPLACE;
		return 0;
	}
	return bytes;
}

MPI_EXPORT int MPI_Barrier(MPI_Comm comm)
{
	PASS(Barrier, comm);
	mpi_comm(comm, 1, &m);
	mpi_end(CBN_MPI_Barrier, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
	PASS(Ibarrier, comm, req);
	mpi_comm(comm, 1, &m);
	mpi_end(CBN_MPI_Ibarrier, &m, ret);
	return ret;
}

static void bcast_fill(struct mpi_call *m, MPI_Comm comm, MPI_Datatype dt, int count, int root)
{
	uint64_t b = mpi_bytes(dt, count);

	mpi_comm(comm, 1, m);
	m->peer = mpi_peer(root);
	if (m->me == root)
		m->sent = b;
	else
		m->recv = b;
}

MPI_EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm)
{
	PASS(Bcast, buf, count, dt, root, comm);
	bcast_fill(&m, comm, dt, count, root);
	mpi_end(CBN_MPI_Bcast, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Ibcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
			  MPI_Request *req)
{
	PASS(Ibcast, buf, count, dt, root, comm, req);
	bcast_fill(&m, comm, dt, count, root);
	mpi_end(CBN_MPI_Ibcast, &m, ret);
	return ret;
}

static void reduce_fill(struct mpi_call *m, const void *sbuf, MPI_Comm comm, MPI_Datatype dt,
			int count, int root)
{
	uint64_t b = mpi_bytes(dt, count);

	mpi_comm(comm, 1, m);
	m->peer = mpi_peer(root);
	m->sent = unless_inplace(sbuf, m, b);
	if (m->me == root)
		m->recv = b;
}

MPI_EXPORT int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
			  int root, MPI_Comm comm)
{
	PASS(Reduce, sbuf, rbuf, count, dt, op, root, comm);
	reduce_fill(&m, sbuf, comm, dt, count, root);
	mpi_end(CBN_MPI_Reduce, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
			   int root, MPI_Comm comm, MPI_Request *req)
{
	PASS(Ireduce, sbuf, rbuf, count, dt, op, root, comm, req);
	reduce_fill(&m, sbuf, comm, dt, count, root);
	mpi_end(CBN_MPI_Ireduce, &m, ret);
	return ret;
}

/* Allreduce, Scan, Exscan: count x size out and in. */
static void allreduce_fill(struct mpi_call *m, const void *sbuf, MPI_Comm comm, MPI_Datatype dt,
			   int count)
{
	uint64_t b = mpi_bytes(dt, count);

	mpi_comm(comm, 1, m);
	m->sent = unless_inplace(sbuf, m, b);
	m->recv = b;
}

#define ALLREDUCE_WRAP(name)                                                        \
	MPI_EXPORT int MPI_##name(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, \
				  MPI_Op op, MPI_Comm comm)                         \
	{                                                                           \
		PASS(name, sbuf, rbuf, count, dt, op, comm);                        \
		allreduce_fill(&m, sbuf, comm, dt, count);                          \
		mpi_end(CBN_MPI_##name, &m, ret);                                   \
		return ret;                                                         \
	}

ALLREDUCE_WRAP(Allreduce)
ALLREDUCE_WRAP(Scan)
ALLREDUCE_WRAP(Exscan)

MPI_EXPORT int MPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
			      MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
	PASS(Iallreduce, sbuf, rbuf, count, dt, op, comm, req);
	allreduce_fill(&m, sbuf, comm, dt, count);
	mpi_end(CBN_MPI_Iallreduce, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			  int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
	PASS(Gather, sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
	mpi_comm(comm, 1, &m);
	m.peer = mpi_peer(root);
	m.sent = unless_inplace(sbuf, &m, mpi_bytes(stype, scount));
	if (m.me == root)
		m.recv = mpi_bytes(rtype, rcount) * (uint64_t)(m.comm_size > 0 ? m.comm_size : 0);
	mpi_end(CBN_MPI_Gather, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			   const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
			   MPI_Comm comm)
{
	PASS(Gatherv, sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
	mpi_comm(comm, 1, &m);
	m.peer = mpi_peer(root);
	m.sent = unless_inplace(sbuf, &m, mpi_bytes(stype, scount));
	if (m.me == root)
		m.recv = mpi_bytes_v(rtype, rcounts, m.comm_size);
	mpi_end(CBN_MPI_Gatherv, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			   int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
	PASS(Scatter, sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
	mpi_comm(comm, 1, &m);
	m.peer = mpi_peer(root);
	if (m.me == root)
		m.sent = mpi_bytes(stype, scount) * (uint64_t)(m.comm_size > 0 ? m.comm_size : 0);
	if (rbuf == MPI_IN_PLACE)
		m.flags |= CBN_MPI_F_INPLACE;
	else
		m.recv = mpi_bytes(rtype, rcount);
	mpi_end(CBN_MPI_Scatter, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[],
			    MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
			    MPI_Comm comm)
{
	PASS(Scatterv, sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
	mpi_comm(comm, 1, &m);
	m.peer = mpi_peer(root);
	if (m.me == root)
		m.sent = mpi_bytes_v(stype, scounts, m.comm_size);
	if (rbuf == MPI_IN_PLACE)
		m.flags |= CBN_MPI_F_INPLACE;
	else
		m.recv = mpi_bytes(rtype, rcount);
	mpi_end(CBN_MPI_Scatterv, &m, ret);
	return ret;
}

static void allgather_fill(struct mpi_call *m, const void *sbuf, int scount, MPI_Datatype stype,
			   int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
	mpi_comm(comm, 1, m);
	m->sent = unless_inplace(sbuf, m, mpi_bytes(stype, scount));
	m->recv = mpi_bytes(rtype, rcount) * (uint64_t)(m->comm_size > 0 ? m->comm_size : 0);
}

MPI_EXPORT int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			     int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
	PASS(Allgather, sbuf, scount, stype, rbuf, rcount, rtype, comm);
	allgather_fill(&m, sbuf, scount, stype, rcount, rtype, comm);
	mpi_end(CBN_MPI_Allgather, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Iallgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			      int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
	PASS(Iallgather, sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
	allgather_fill(&m, sbuf, scount, stype, rcount, rtype, comm);
	mpi_end(CBN_MPI_Iallgather, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			      const int rcounts[], const int displs[], MPI_Datatype rtype,
			      MPI_Comm comm)
{
	PASS(Allgatherv, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
	mpi_comm(comm, 1, &m);
	m.sent = unless_inplace(sbuf, &m, mpi_bytes(stype, scount));
	m.recv = mpi_bytes_v(rtype, rcounts, m.comm_size);
	mpi_end(CBN_MPI_Allgatherv, &m, ret);
	return ret;
}

static void alltoall_fill(struct mpi_call *m, const void *sbuf, int scount, MPI_Datatype stype,
			  int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
	uint64_t n;

	mpi_comm(comm, 1, m);
	n = (uint64_t)(m->comm_size > 0 ? m->comm_size : 0);
	m->sent = unless_inplace(sbuf, m, mpi_bytes(stype, scount) * n);
	m->recv = mpi_bytes(rtype, rcount) * n;
}

MPI_EXPORT int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			    int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
	PASS(Alltoall, sbuf, scount, stype, rbuf, rcount, rtype, comm);
	alltoall_fill(&m, sbuf, scount, stype, rcount, rtype, comm);
	mpi_end(CBN_MPI_Alltoall, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Ialltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			     int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
	PASS(Ialltoall, sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
	alltoall_fill(&m, sbuf, scount, stype, rcount, rtype, comm);
	mpi_end(CBN_MPI_Ialltoall, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
			     MPI_Datatype stype, void *rbuf, const int rcounts[],
			     const int rdispls[], MPI_Datatype rtype, MPI_Comm comm)
{
	PASS(Alltoallv, sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
	mpi_comm(comm, 1, &m);
	m.sent = sbuf == MPI_IN_PLACE ? unless_inplace(sbuf, &m, 0) :
					mpi_bytes_v(stype, scounts, m.comm_size);
	m.recv = mpi_bytes_v(rtype, rcounts, m.comm_size);
	mpi_end(CBN_MPI_Alltoallv, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[],
				  MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	PASS(Reduce_scatter, sbuf, rbuf, rcounts, dt, op, comm);
	mpi_comm(comm, 1, &m);
	m.sent = unless_inplace(sbuf, &m, mpi_bytes_v(dt, rcounts, m.comm_size));
	if (rcounts && m.me >= 0 && m.me < m.comm_size)
		m.recv = mpi_bytes(dt, rcounts[m.me]);
	mpi_end(CBN_MPI_Reduce_scatter, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt,
					MPI_Op op, MPI_Comm comm)
{
	PASS(Reduce_scatter_block, sbuf, rbuf, rcount, dt, op, comm);
	mpi_comm(comm, 1, &m);
	m.sent = unless_inplace(sbuf, &m,
				mpi_bytes(dt, rcount) *
					(uint64_t)(m.comm_size > 0 ? m.comm_size : 0));
	m.recv = mpi_bytes(dt, rcount);
	mpi_end(CBN_MPI_Reduce_scatter_block, &m, ret);
	return ret;
}

/* --- one-sided: peer is the target's rank in the window's group ------------ */

MPI_EXPORT int MPI_Put(const void *obuf, int ocount, MPI_Datatype otype, int target,
		       MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPI_Win win)
{
	PASS(Put, obuf, ocount, otype, target, tdisp, tcount, ttype, win);
	mpi_win(win, &m);
	m.sent = mpi_bytes(otype, ocount);
	m.peer = mpi_peer(target);
	mpi_end(CBN_MPI_Put, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Get(void *obuf, int ocount, MPI_Datatype otype, int target, MPI_Aint tdisp,
		       int tcount, MPI_Datatype ttype, MPI_Win win)
{
	PASS(Get, obuf, ocount, otype, target, tdisp, tcount, ttype, win);
	mpi_win(win, &m);
	m.recv = mpi_bytes(otype, ocount);
	m.peer = mpi_peer(target);
	mpi_end(CBN_MPI_Get, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Accumulate(const void *obuf, int ocount, MPI_Datatype otype, int target,
			      MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPI_Op op,
			      MPI_Win win)
{
	PASS(Accumulate, obuf, ocount, otype, target, tdisp, tcount, ttype, op, win);
	mpi_win(win, &m);
	m.sent = mpi_bytes(otype, ocount);
	m.peer = mpi_peer(target);
	mpi_end(CBN_MPI_Accumulate, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Win_fence(int assert_, MPI_Win win)
{
	PASS(Win_fence, assert_, win);
	mpi_win(win, &m);
	mpi_end(CBN_MPI_Win_fence, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Win_lock(int type, int rank, int assert_, MPI_Win win)
{
	PASS(Win_lock, type, rank, assert_, win);
	mpi_win(win, &m);
	m.peer = mpi_peer(rank);
	mpi_end(CBN_MPI_Win_lock, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Win_unlock(int rank, MPI_Win win)
{
	PASS(Win_unlock, rank, win);
	mpi_win(win, &m);
	m.peer = mpi_peer(rank);
	mpi_end(CBN_MPI_Win_unlock, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Win_flush(int rank, MPI_Win win)
{
	PASS(Win_flush, rank, win);
	mpi_win(win, &m);
	m.peer = mpi_peer(rank);
	mpi_end(CBN_MPI_Win_flush, &m, ret);
	return ret;
}

/* --- completion --------------------------------------------------------------
 * count: requests this call completed.  A request that was MPI_REQUEST_NULL
 * before the call completes nothing. */

static uint32_t live_requests(int n, const MPI_Request *reqs)
{
	MPI_Request null = mpi_request_null();
	uint32_t live = 0;
	int i;

	for (i = 0; reqs && i < n; i++)
		live += reqs[i] != null;
	return live;
}

MPI_EXPORT int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
	uint32_t live = req && *req != mpi_request_null();

	PASS(Wait, req, status);
	m.count = ret == MPI_SUCCESS ? live : 0;
	mpi_end(CBN_MPI_Wait, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
	uint32_t live = live_requests(count, reqs);

	PASS(Waitall, count, reqs, statuses);
	m.count = ret == MPI_SUCCESS ? live : 0;
	mpi_end(CBN_MPI_Waitall, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
	PASS(Waitany, count, reqs, index, status);
	m.count = ret == MPI_SUCCESS && index && *index != MPI_UNDEFINED;
	mpi_end(CBN_MPI_Waitany, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
			    MPI_Status statuses[])
{
	PASS(Waitsome, incount, reqs, outcount, indices, statuses);
	m.count = ret == MPI_SUCCESS && outcount && *outcount > 0 ? (uint32_t)*outcount : 0;
	mpi_end(CBN_MPI_Waitsome, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
	uint32_t live = req && *req != mpi_request_null();

	PASS(Test, req, flag, status);
	m.count = ret == MPI_SUCCESS && flag && *flag ? live : 0;
	m.poll = ret == MPI_SUCCESS && !m.count;
	mpi_end(CBN_MPI_Test, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
	uint32_t live = live_requests(count, reqs);

	PASS(Testall, count, reqs, flag, statuses);
	m.count = ret == MPI_SUCCESS && flag && *flag ? live : 0;
	m.poll = ret == MPI_SUCCESS && !m.count;
	mpi_end(CBN_MPI_Testall, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Testany(int count, MPI_Request reqs[], int *index, int *flag,
			   MPI_Status *status)
{
	PASS(Testany, count, reqs, index, flag, status);
	m.count = ret == MPI_SUCCESS && flag && *flag && index && *index != MPI_UNDEFINED;
	m.poll = ret == MPI_SUCCESS && !m.count;
	mpi_end(CBN_MPI_Testany, &m, ret);
	return ret;
}

MPI_EXPORT int MPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
			    MPI_Status statuses[])
{
	PASS(Testsome, incount, reqs, outcount, indices, statuses);
	m.count = ret == MPI_SUCCESS && outcount && *outcount > 0 ? (uint32_t)*outcount : 0;
	m.poll = ret == MPI_SUCCESS && !m.count;
	mpi_end(CBN_MPI_Testsome, &m, ret);
	return ret;
}

/* --- handles freed: not recorded, only forgotten ---------------------------- */

MPI_EXPORT int MPI_Comm_free(MPI_Comm *comm)
{
	PMPI_FN_OR(Comm_free, MPI_ERR_INTERN);

	if (comm)
		mpi_forget((void *)*comm);
	return f(comm);
}

MPI_EXPORT int MPI_Win_free(MPI_Win *win)
{
	PMPI_FN_OR(Win_free, MPI_ERR_INTERN);

	if (win)
		mpi_forget((void *)*win);
	return f(win);
}
