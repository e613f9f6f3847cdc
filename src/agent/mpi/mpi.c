/*
 * mpi.c — libcbottleneck_mpi.so's core: the PMPI functions found at run time,
 * the communicator ids and collective counts, and the one place a wrapper's
 * call becomes a CBN_REC_MPI record (docs/distributed.md, "MPI calls").
 * The wrappers themselves are in wrap.c, the clock exchange in clock.c.
 *
 * Built against Open MPI's mpi.h for the types and prototypes only: nothing
 * here refers to a libmpi symbol at link time (-z defs, no -lmpi), so the
 * library loads, and stays inert, in any process.  Open MPI's predefined
 * handles (MPI_COMM_WORLD is &ompi_mpi_comm_world) are looked up by dlsym
 * when first needed.  Normal context only; thread-safe.
 */
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "elfsym.h"
#include "mpi_layer.h"

#define MPI_SLOT_DEF(name) _Atomic(void *) mpi_slot_##name;
MPI_PMPI_NAMES(MPI_SLOT_DEF)
#undef MPI_SLOT_DEF

static __thread int mpi_depth __attribute__((tls_model("initial-exec")));
static __thread uint32_t mpi_tid __attribute__((tls_model("initial-exec")));

/*
 * A PMPI function: the next definition after ours (libmpi in the global
 * scope), else from a libmpi that was dlopened RTLD_LOCAL (the program's
 * MPI_ calls still reach us through the preload, but RTLD_NEXT cannot see
 * it).  Cached in *slot; racing threads store the same value.
 */
void *mpi_real(_Atomic(void *) *slot, const char *name)
{
	static const char *const libs[] = {"libmpi.so.40", "libmpi.so.12", "libmpi.so"};
	void *f = atomic_load_explicit(slot, memory_order_relaxed);
	unsigned i;

	if (f)
		return f;
	f = dlsym(RTLD_NEXT, name);
	for (i = 0; !f && i < sizeof(libs) / sizeof(libs[0]); i++) {
		void *h = dlopen(libs[i], RTLD_NOW | RTLD_NOLOAD);

		if (h) {
			f = dlsym(h, name);
			dlclose(h);
		}
	}
	if (f)
		atomic_store_explicit(slot, f, memory_order_relaxed);
	return f;
}

/*
 * Open MPI's predefined objects, by symbol (see the file comment).  From the
 * global scope first, not RTLD_NEXT: a program that names MPI_COMM_WORLD may
 * hold the object itself (a copy relocation into its .bss), and that copy is
 * the one libmpi uses; libmpi's own definition is then a stale original.
 */
static void *mpi_global(_Atomic(void *) *slot, const char *name)
{
	void *p = atomic_load_explicit(slot, memory_order_relaxed);

	if (p)
		return p;
	p = dlsym(RTLD_DEFAULT, name);
	if (p)
		atomic_store_explicit(slot, p, memory_order_relaxed);
	return p ? p : mpi_real(slot, name);
}

MPI_Comm mpi_world(void)
{
	static _Atomic(void *) w;

	return (MPI_Comm)mpi_global(&w, "ompi_mpi_comm_world");
}

static MPI_Comm mpi_self(void)
{
	static _Atomic(void *) s;

	return (MPI_Comm)mpi_global(&s, "ompi_mpi_comm_self");
}

MPI_Datatype mpi_byte(void)
{
	static _Atomic(void *) b;

	return (MPI_Datatype)mpi_global(&b, "ompi_mpi_byte");
}

MPI_Request mpi_request_null(void)
{
	static _Atomic(void *) r;

	return (MPI_Request)mpi_global(&r, "ompi_request_null");
}

/* --- begin and end of a recorded call ------------------------------------ */

int mpi_begin(struct mpi_call *m)
{
	if (mpi_depth || !cbn_agent_rank_state())
		return 0; /* inside our own PMPI use, or no session: pass through */
	mpi_depth++;
	memset(m, 0, sizeof(*m));
	m->peer = CBN_MPI_PEER_NONE;
	m->t0 = cbn_agent_now();
	return 1;
}

/*
 * A full backtrace costs tens of microseconds (libunwind, measured ~60 us for
 * four frames on the CI machine), far more than a fast MPI call.  So the
 * stack is unwound only for the first call from each call site (the site's
 * callers are then known) and for calls that took MPI_STACK_NS or more (the
 * ones that matter for time; the unwinding then adds a few per cent); every
 * other record carries the call site alone, the wrapper's return address,
 * which costs nothing (mpiP's default depth is 1 too).
 */
#define SITE_SLOTS 4096

static _Atomic uint64_t site_seen[SITE_SLOTS];

/* 1 the first time pc is seen (lock-free; a full table says 0). */
static int site_first(uint64_t pc)
{
	size_t h = (size_t)((pc >> 2) * 0x9e3779b97f4a7c15ull) % SITE_SLOTS, i;

	if (!pc)
		return 1;
	for (i = 0; i < 64; i++) {
		_Atomic uint64_t *s = &site_seen[(h + i) % SITE_SLOTS];
		uint64_t cur = atomic_load_explicit(s, memory_order_relaxed);

		if (cur == pc)
			return 0;
		if (!cur && atomic_compare_exchange_strong(s, &cur, pc))
			return 1;
		if (cur == pc)
			return 0; /* another thread put it there first */
	}
	return 0;
}

/*
 * The record of one call, written when it has returned.  noinline and built
 * with -fno-optimize-sibling-calls: the stack is this frame, the wrapper's,
 * then the program's call site, so skipping two frames leaves the call site
 * first.  errno is the one the PMPI call left (saved by the wrapper).
 */
__attribute__((noinline)) void mpi_end(int call, struct mpi_call *m, int ret)
{
	struct {
		struct cbn_rec_mpi r;
		uint64_t pc[MPI_FRAMES];
	} rec;
	struct cbn_rank_state *s = cbn_agent_rank_state();
	uint64_t t1 = cbn_agent_now();
	int n;

	if (!mpi_tid)
		mpi_tid = (uint32_t)syscall(SYS_gettid);
	if (m->poll && s) {
		/* Nothing completed: counted, not recorded (the file comment of
		 * wrap.c says why). */
		atomic_fetch_add(&s->mpi_polls, 1);
		atomic_fetch_add(&s->mpi_poll_ns, t1 - m->t0);
		goto out;
	}
	/* The whole stack for a new call site or a long call; else the call
	 * site alone (see MPI_STACK_NS). */
	n = 0;
	if (t1 - m->t0 >= MPI_STACK_NS || site_first(m->site))
		n = cbn_agent_backtrace(rec.pc, MPI_FRAMES, 2);
	if (n <= 0 && m->site) {
		rec.pc[0] = m->site;
		n = 1;
	}
	memset(&rec.r, 0, sizeof(rec.r));
	rec.r.h.type = CBN_REC_MPI;
	rec.r.h.flags = (uint16_t)(m->flags | (ret != MPI_SUCCESS ? CBN_MPI_F_ERROR : 0));
	rec.r.h.size = (uint32_t)(sizeof(rec.r) + (size_t)n * sizeof(uint64_t));
	rec.r.start = m->t0;
	rec.r.end = t1;
	rec.r.bytes_sent = m->sent;
	rec.r.bytes_recv = m->recv;
	rec.r.tid = mpi_tid;
	rec.r.call = (uint16_t)call;
	rec.r.nframes = (uint16_t)n;
	rec.r.peer = m->peer;
	rec.r.tag = m->tag;
	rec.r.comm = m->comm;
	rec.r.comm_size = m->comm_size;
	rec.r.seq = m->seq;
	rec.r.count = m->count;
	if (s) {
		if (cbn_agent_write(&rec, rec.r.h.size) == 0)
			atomic_fetch_add(&s->mpi_calls, 1);
		else
			atomic_fetch_add(&s->mpi_lost, 1);
	}
out:
	mpi_depth--;
	errno = m->err;
}

void mpi_enter_internal(void)
{
	mpi_depth++;
}

void mpi_leave_internal(void)
{
	mpi_depth--;
}

/* --- sizes ----------------------------------------------------------------- */

uint64_t mpi_bytes(MPI_Datatype dt, int count)
{
	PMPI_FN_OR(Type_size, 0);
	int size = 0;

	if (count <= 0 || f(dt, &size) != MPI_SUCCESS || size <= 0)
		return 0;
	return (uint64_t)size * (uint64_t)count;
}

uint64_t mpi_bytes_v(MPI_Datatype dt, const int *counts, int n)
{
	uint64_t sum = 0;
	int i;

	if (!counts)
		return 0;
	for (i = 0; i < n; i++)
		if (counts[i] > 0)
			sum += (uint64_t)counts[i];
	return sum ? mpi_bytes(dt, 1) * sum : 0;
}

/* What a completed receive's status says arrived, in bytes. */
uint64_t mpi_status_bytes(const MPI_Status *st, MPI_Datatype dt)
{
	PMPI_FN_OR(Get_count, 0);
	int n = 0;

	if (f(st, dt, &n) == MPI_SUCCESS && n != MPI_UNDEFINED && n >= 0)
		return mpi_bytes(dt, n);
	/* Not a whole number of dt: Open MPI counts bytes in the status. */
	if (mpi_byte() && f(st, mpi_byte(), &n) == MPI_SUCCESS && n != MPI_UNDEFINED && n >= 0)
		return (uint64_t)n;
	return 0;
}

int32_t mpi_peer(int rank)
{
	if (rank == MPI_ANY_SOURCE)
		return CBN_MPI_PEER_ANY;
	if (rank < 0)
		return CBN_MPI_PEER_NONE; /* MPI_PROC_NULL */
	return rank;
}

/* --- communicators ----------------------------------------------------------
 * key (an MPI_Comm or MPI_Win) -> id, size, our rank in it, collective count.
 * Open addressing, no deletion but a tombstone from MPI_Comm_free/Win_free.
 * Full: ids are computed each time and seq is 0 (unknown).
 */
#define COMM_SLOTS 1024
#define COMM_DEAD ((void *)1)

struct comm_ent {
	void *key;
	uint32_t id;
	int size, me;
	uint32_t seq;
};

static struct comm_ent comm_tab[COMM_SLOTS];
static pthread_mutex_t comm_lock = PTHREAD_MUTEX_INITIALIZER;

/* FNV-1a over the members' world ranks, in the group's order: the same on
 * every member.  0 and 1 are world's and self's. */
static uint32_t comm_hash_group(MPI_Group g, int n)
{
	PMPI_FN_OR(Comm_group, 2);
	__typeof__(&PMPI_Group_translate_ranks) tr =
		(__typeof__(&PMPI_Group_translate_ranks))MPI_PMPI(Group_translate_ranks);
	__typeof__(&PMPI_Group_free) gf = (__typeof__(&PMPI_Group_free))MPI_PMPI(Group_free);
	MPI_Group wg;
	uint32_t h = 2166136261u;
	int *in, *out, i;

	if (!tr || !gf || n <= 0 || f(mpi_world(), &wg) != MPI_SUCCESS)
		return 2;
	in = malloc(2 * (size_t)n * sizeof(int));
	if (!in) {
		gf(&wg);
		return 2;
	}
	out = in + n;
	for (i = 0; i < n; i++)
		in[i] = i;
	if (tr(g, n, in, wg, out) == MPI_SUCCESS) {
		for (i = 0; i < n; i++) {
			uint32_t v = (uint32_t)out[i];
			int b;

			for (b = 0; b < 4; b++) {
				h ^= (v >> (8 * b)) & 0xff;
				h *= 16777619u;
			}
		}
	}
	free(in);
	gf(&wg);
	return h < 2 ? h + 2 : h;
}

static void comm_compute(void *key, int is_win, struct comm_ent *e)
{
	MPI_Group g;

	e->key = key;
	e->seq = 0;
	e->id = 2;
	e->size = 0;
	e->me = -1;
	if (!is_win && key == (void *)mpi_world())
		e->id = 0;
	else if (!is_win && key == (void *)mpi_self())
		e->id = 1;
	if (is_win) {
		PMPI_FN_VOID(Win_get_group);
		if (f((MPI_Win)key, &g) != MPI_SUCCESS)
			return;
	} else {
		PMPI_FN_VOID(Comm_group);
		if (f((MPI_Comm)key, &g) != MPI_SUCCESS)
			return;
	}
	{
		PMPI_FN_VOID(Group_size);
		__typeof__(&PMPI_Group_rank) gr = (__typeof__(&PMPI_Group_rank))MPI_PMPI(Group_rank);
		__typeof__(&PMPI_Group_free) gf = (__typeof__(&PMPI_Group_free))MPI_PMPI(Group_free);

		if (f(g, &e->size) != MPI_SUCCESS)
			e->size = 0;
		if (gr && gr(g, &e->me) != MPI_SUCCESS)
			e->me = -1;
		if (e->id >= 2)
			e->id = comm_hash_group(g, e->size);
		if (gf)
			gf(&g);
	}
}

static void comm_lookup(void *key, int is_win, int coll, struct mpi_call *m)
{
	size_t h = ((uintptr_t)key >> 4) * 0x9e3779b97f4a7c15ull, i;
	struct comm_ent tmp, *e = NULL, *dead = NULL;

	if (!key)
		return;
	pthread_mutex_lock(&comm_lock);
	for (i = 0; i < COMM_SLOTS; i++) {
		struct comm_ent *c = &comm_tab[(h + i) % COMM_SLOTS];

		if (c->key == key) {
			e = c;
			break;
		}
		if (c->key == COMM_DEAD && !dead)
			dead = c;
		if (!c->key) {
			e = dead ? dead : c;
			comm_compute(key, is_win, e);
			break;
		}
	}
	if (!e && dead) {
		e = dead;
		comm_compute(key, is_win, e);
	}
	if (!e) {
		comm_compute(key, is_win, &tmp);
		e = &tmp;
	} else if (coll) {
		e->seq++;
	}
	m->comm = e->id;
	m->comm_size = e->size;
	m->me = e->me;
	m->seq = coll && e != &tmp ? e->seq : 0;
	pthread_mutex_unlock(&comm_lock);
}

void mpi_comm(MPI_Comm c, int coll, struct mpi_call *m)
{
	comm_lookup((void *)c, 0, coll, m);
}

void mpi_win(MPI_Win w, struct mpi_call *m)
{
	comm_lookup((void *)w, 1, 0, m);
}

/* A handle about to be freed: its address may come back for another one. */
void mpi_forget(void *key)
{
	size_t h = ((uintptr_t)key >> 4) * 0x9e3779b97f4a7c15ull, i;

	pthread_mutex_lock(&comm_lock);
	for (i = 0; i < COMM_SLOTS; i++) {
		struct comm_ent *c = &comm_tab[(h + i) % COMM_SLOTS];

		if (c->key == key) {
			c->key = COMM_DEAD;
			break;
		}
		if (!c->key)
			break;
	}
	pthread_mutex_unlock(&comm_lock);
}

/* --- the header ------------------------------------------------------------ */

/* At load: libmpi is already here (linked by the program) or not yet (it
 * may come by dlopen; MPI_Init says so then).  Looked up in the loaded
 * objects' tables, not with dlsym: in a program without MPI (most of them)
 * the miss would allocate dlsym's error with the program's malloc. */
__attribute__((constructor)) static void mpi_layer_init(void)
{
	struct cbn_rank_state *s = cbn_agent_rank_state();
	struct link_map *self = NULL;
	Dl_info di;

	if (s && dladdr1((void *)mpi_layer_init, &di, (void **)&self, RTLD_DL_LINKMAP) && self &&
	    elfsym_global(self, NULL, "PMPI_Init"))
		atomic_store(&s->mpi, CBN_MPI_LOADED);
}

void mpi_after_init(void)
{
	struct cbn_rank_state *s = cbn_agent_rank_state();
	char ver[MPI_MAX_LIBRARY_VERSION_STRING];
	int len = 0, rank = -1, size = 0;
	char *nl;

	if (!s)
		return;
	{
		PMPI_FN_VOID(Get_library_version);
		if (f(ver, &len) != MPI_SUCCESS || len <= 0 || len >= (int)sizeof(ver))
			len = 0;
	}
	ver[len] = '\0';
	nl = strpbrk(ver, "\r\n");
	if (nl)
		*nl = '\0';
	len = (int)strlen(ver);
	if (len >= (int)sizeof(s->mpi_version))
		len = (int)sizeof(s->mpi_version) - 1;
	memcpy(s->mpi_version, ver, (size_t)len);
	s->mpi_version[len] = '\0';
	s->mpi_impl = strstr(ver, "Open MPI") ? CBN_MPI_IMPL_OPENMPI :
		      strstr(ver, "MPICH") ? CBN_MPI_IMPL_MPICH : CBN_MPI_IMPL_UNKNOWN;
	{
		PMPI_FN_VOID(Comm_rank);
		if (f(mpi_world(), &rank) != MPI_SUCCESS)
			rank = -1;
	}
	{
		PMPI_FN_VOID(Comm_size);
		if (f(mpi_world(), &size) != MPI_SUCCESS)
			size = 0;
	}
	cbn_agent_rank_from_mpi(rank, size);
	/* An environment that named the rank but not the size (PMIX_RANK). */
	if (atomic_load(&s->world_size) == 0 && size > atomic_load(&s->rank))
		atomic_store(&s->world_size, size);
	atomic_store(&s->mpi, CBN_MPI_INITIALIZED);
}

void mpi_after_finalize(void)
{
	struct cbn_rank_state *s = cbn_agent_rank_state();

	if (s)
		atomic_store(&s->mpi, CBN_MPI_FINALIZED);
}
