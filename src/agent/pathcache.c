/*
 * pathcache.c — backtraces of call paths seen before, without unwinding.  The
 * CUDA layer captures the host stack at every launch, copy and sync; a
 * training loop makes the same few hundred calls from the same call paths
 * every step, 100-200 native frames deep under an interpreter, and unwinding
 * them each time cost 3-10 us a call.  So each thread keeps its last few
 * captures: where its own frame was, the frames' return addresses, and the
 * stack slot each return address was found in.  A capture from the same frame
 * address whose every slot still holds its return address is the same call
 * path (a different caller anywhere out puts another return address in that
 * caller's slot): its frames are returned again, at the cost of one load and
 * compare a frame.
 *
 * Python frames are not in the native call path (the interpreter's frames
 * live on the heap): they are read afresh at every capture (python_walk.c)
 * and appended, and the key covers them too.
 *
 * Normal context only (CUDA callbacks on the program's threads): the slots lie
 * in this thread's live stack between the capture's frame and its top, read
 * directly.  A capture whose slots cannot all be found (a frame outside the
 * known stack, a signal frame) is not cached.  Dropped when a library is
 * unloaded (unwind_gen) and in a fork child (new TLS is not made; the child
 * keeps the parent thread's stack, so the entries stay true).
 */
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "agent_api.h"
#include "sigpath.h"

#define AGENT_API __attribute__((visibility("default")))

#define PATH_ENTRIES 8        /* call paths kept per thread */
#define PATH_SCAN (64u << 10) /* bytes searched above a slot for the next one */

struct path_entry {
	uintptr_t frame;           /* the capturing function's frame address; 0: empty */
	unsigned n;
	unsigned stamp;            /* last use, for replacement */
	uint64_t key;              /* path_key of pc[0..n) */
	uint64_t pc[CBN_MAX_FRAMES];
	uintptr_t slot[CBN_MAX_FRAMES];
};

struct path_cache {
	unsigned gen;              /* unwind_gen the entries were made under */
	unsigned clock;
	struct path_entry e[PATH_ENTRIES];
	uint64_t out[CBN_MAX_FRAMES]; /* native frames + Python words, returned */
};

static __thread struct path_cache *path_tls AGENT_TLS;
static _Atomic unsigned path_gen;

/* A library was unloaded: its addresses may come back as another's. */
void pathcache_invalidate(void)
{
	atomic_fetch_add(&path_gen, 1);
}

/* The slots hold their return addresses still, and lie in this thread's
 * stack above frame (what a hit reads). */
static int path_slots_ok(const struct path_entry *e, uintptr_t frame)
{
	const struct agent_thread *t = &agent_tls;
	unsigned i;

	for (i = 0; i < e->n; i++)
		if (e->slot[i] <= frame || e->slot[i] + 8 > t->ustk_hi || e->slot[i] % 8)
			return 0;
	return 1;
}

/* A stack's key: a 64-bit hash of its pcs, never 0. */
static uint64_t path_key(const uint64_t *pcs, int n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)n;
	int i;

	for (i = 0; i < n; i++) {
		h ^= pcs[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h ? h : 1;
}

static int path_same(const struct path_entry *e, uintptr_t frame)
{
	unsigned i;

	if (e->frame != frame)
		return 0;
	for (i = 0; i < e->n; i++)
		if (*(const uint64_t *)e->slot[i] != e->pc[i])
			return 0;
	return 1;
}

/* The entry's native frames with this thread's Python frames after them (as
 * cbn_agent_backtrace gives them: native first, Python words last), in
 * c->out; or the entry's own frames when there is no Python. */
static const uint64_t *path_with_python(struct path_cache *c, const struct path_entry *e,
					 uintptr_t frame, int *n, uint64_t *key)
{
	uint64_t py[CBN_MAX_FRAMES];
	int npy = python_active() ? python_stack_for(py, CBN_MAX_FRAMES, frame) : 0, nn;

	if (npy <= 0) {
		*n = (int)e->n;
		*key = e->key;
		return e->pc;
	}
	nn = (int)e->n < CBN_MAX_FRAMES - npy ? (int)e->n : CBN_MAX_FRAMES - npy;
	memcpy(c->out, e->pc, (size_t)nn * sizeof(c->out[0]));
	memcpy(c->out + nn, py, (size_t)npy * sizeof(c->out[0]));
	*n = nn + npy;
	*key = path_key(c->out, *n);
	return c->out;
}

AGENT_API __attribute__((noinline)) const uint64_t *cbn_agent_backtrace_cached(int *n,
									    uint64_t *key)
{
	uintptr_t frame = (uintptr_t)__builtin_frame_address(0);
	struct path_cache *c = path_tls;
	struct path_entry *e, *old;
	int k, i;

	*n = 0;
	*key = 0;
	if (!c) {
		c = calloc(1, sizeof(*c));
		path_tls = c;
		if (!c)
			return NULL;
	}
	if (c->gen != atomic_load_explicit(&path_gen, memory_order_relaxed)) {
		memset(c->e, 0, sizeof(c->e));
		c->gen = atomic_load_explicit(&path_gen, memory_order_relaxed);
	}
	for (i = 0; i < PATH_ENTRIES; i++) {
		e = &c->e[i];
		if (e->frame && path_same(e, frame)) {
			e->stamp = ++c->clock;
			return path_with_python(c, e, frame, n, key);
		}
	}
	if (!agent_loader_ok())
		return NULL;
	old = &c->e[0];
	for (i = 1; i < PATH_ENTRIES; i++)
		if (c->e[i].stamp < old->stamp)
			old = &c->e[i];
	/* Frame by frame, with each frame's stack pointer: the slot of a
	 * return address is that stack pointer - 8.  [0] returns here. */
	modules_refresh();
	k = unwind_backtrace_sp(old->pc, old->slot, CBN_MAX_FRAMES);
	if (k <= 1) {
		old->frame = 0;
		return NULL;
	}
	k--;
	memmove(old->pc, old->pc + 1, (size_t)k * sizeof(old->pc[0]));
	for (i = 0; i < k; i++)
		old->slot[i] = old->slot[i + 1] - 8;
	old->n = (unsigned)k;
	old->key = path_key(old->pc, k);
	old->frame = path_slots_ok(old, frame) ? frame : 0;
	old->stamp = ++c->clock;
	return path_with_python(c, old, frame, n, key);
}
