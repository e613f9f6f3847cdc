/*
 * pathcache.c — backtraces of call paths seen before, without unwinding.  The
 * CUDA layer captures the host stack at every launch, copy and sync; a
 * training loop makes the same few hundred calls from the same call paths
 * every step, 100-200 native frames deep under an interpreter, and unwinding
 * them each time cost 3-10 us a call (30-60 us on PyTorch's deep C++ stacks).
 * So each thread keeps the call paths it captured: where its own frame was,
 * the frames' return addresses, and the stack slot each return address was
 * found in.  A capture from the same frame address whose every slot still
 * holds its return address is the same call path (a different caller anywhere
 * out puts another return address in that caller's slot): its frames are
 * returned again, at the cost of one load and compare a frame.
 *
 * Python frames are not in the native call path (the interpreter's frames
 * live on the heap): they are read afresh at every capture (python_walk.c)
 * and appended, and the key covers them too.
 *
 * Each thread keeps up to PATH_MAX_PATHS paths, found by their frame address
 * (a hash index), in memory of its own mapped outside the program's heap;
 * when they are all taken the table starts over (a training step of ResNet-18
 * has a few dozen launch paths a thread).
 *
 * Normal context only (CUDA callbacks on the program's threads): the slots lie
 * in this thread's live stack between the capture's frame and its top, read
 * directly.  A capture whose slots are not all there (a frame outside the
 * known stack) is not cached.  Dropped when a library is unloaded
 * (unwind_hold.c's generation).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "floor.h"
#include "modules.h"
#include "pathcache.h"
#include "python_walk.h"
#include "unwind.h"
#include "unwind_hold.h"
#include "agent_api.h"

#define AGENT_API __attribute__((visibility("default")))

#define PATH_MAX_PATHS 1024        /* call paths kept per thread */
#define PATH_BUCKETS 256           /* hash index on the frame address */
#define PATH_ARENA (4u << 20)      /* bytes of entries per thread, at most */

struct path_entry {
	struct path_entry *next;   /* in its bucket */
	uintptr_t frame;           /* the capturing function's frame address */
	uint64_t key;              /* path_key of pc[0..n) */
	uint32_t n;
	uint32_t pad;
	uint64_t pc[];             /* n return addresses, then n slots */
};

struct path_cache {
	unsigned gen;              /* unwind_generation() the entries were made under */
	unsigned npaths;
	char *arena;               /* PATH_ARENA bytes, mapped on first use */
	size_t used;
	struct path_entry *bucket[PATH_BUCKETS];
	uint64_t out[CBN_MAX_FRAMES];  /* native frames + Python words, returned */
	uint64_t pc[CBN_MAX_FRAMES + 1];  /* a capture, before it is an entry */
	uintptr_t sp[CBN_MAX_FRAMES + 1];
};

static __thread struct path_cache *path_tls AGENT_TLS;
static _Atomic uint64_t path_misses;  /* captures unwound (CBN_CUDA_SELFTIME) */

/* How many captures were unwound rather than found (the CUDA layer's
 * CBN_CUDA_SELFTIME report). */
AGENT_API uint64_t cbn_agent_pathcache_misses(void)
{
	return atomic_load_explicit(&path_misses, memory_order_relaxed);
}

/* The thread ends (threads.c): its table goes. */
void pathcache_thread_end(void)
{
	struct path_cache *c = path_tls;

	path_tls = NULL;
	if (c)
		agent_syscall(SYS_munmap, c, sizeof(*c) + PATH_ARENA);
}

static uintptr_t *path_slot(struct path_entry *e)
{
	return (uintptr_t *)(e->pc + e->n);
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

static unsigned path_bucket(uintptr_t frame)
{
	return (unsigned)((frame >> 4) * 0x9e3779b1u >> 24) % PATH_BUCKETS;
}

static int path_same(struct path_entry *e, uintptr_t frame)
{
	const uintptr_t *slot = path_slot(e);
	uint32_t i;

	if (e->frame != frame)
		return 0;
	for (i = 0; i < e->n; i++)
		if (*(const uint64_t *)slot[i] != e->pc[i])
			return 0;
	return 1;
}

/* The per-thread table, emptied when a library was unloaded; NULL when its
 * memory cannot be had. */
static struct path_cache *path_cache_get(void)
{
	struct path_cache *c = path_tls;
	/* A library unloaded since (unwind_hold.c): its addresses may come
	 * back as another's. */
	unsigned gen = unwind_generation();

	if (!c) {
		/* Outside the program's heap: the allocation hooks would count it. */
		void *m = (void *)agent_syscall(SYS_mmap, NULL, sizeof(*c) + PATH_ARENA,
						PROT_READ | PROT_WRITE,
						MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (m == MAP_FAILED)
			return NULL;
		c = m;
		c->arena = (char *)m + sizeof(*c);
		c->gen = gen;
		path_tls = c;
	}
	if (c->gen != gen) {
		memset(c->bucket, 0, sizeof(c->bucket));
		c->used = 0;
		c->npaths = 0;
		c->gen = gen;
	}
	return c;
}

/* A new entry for n frames (the table starts over when full). */
static struct path_entry *path_new(struct path_cache *c, uint32_t n)
{
	size_t size = sizeof(struct path_entry) + (size_t)n * 16;
	struct path_entry *e;

	size = (size + 15) & ~(size_t)15;
	if (c->npaths >= PATH_MAX_PATHS || c->used + size > PATH_ARENA) {
		memset(c->bucket, 0, sizeof(c->bucket));
		c->used = 0;
		c->npaths = 0;
	}
	e = (struct path_entry *)(c->arena + c->used);
	c->used += size;
	c->npaths++;
	e->n = n;
	return e;
}

/* The entry's native frames with this thread's Python frames after them (as
 * cbn_agent_backtrace gives them: native first, Python words last), in
 * c->out; or the entry's own frames when there is no Python. */
static const uint64_t *path_with_python(struct path_cache *c, const uint64_t *pc, int np,
					 uint64_t key, uintptr_t frame, int *n, uint64_t *okey)
{
	uint64_t py[CBN_MAX_FRAMES];
	int npy = python_active() ? python_stack_for(py, CBN_MAX_FRAMES, frame) : 0, nn;

	if (npy <= 0) {
		*n = np;
		*okey = key;
		return pc;
	}
	nn = np < CBN_MAX_FRAMES - npy ? np : CBN_MAX_FRAMES - npy;
	memcpy(c->out, pc, (size_t)nn * sizeof(c->out[0]));
	memcpy(c->out + nn, py, (size_t)npy * sizeof(c->out[0]));
	*n = nn + npy;
	*okey = path_key(c->out, *n);
	return c->out;
}

AGENT_API __attribute__((noinline)) const uint64_t *cbn_agent_backtrace_cached(int *n,
									    uint64_t *key)
{
	uintptr_t frame = (uintptr_t)__builtin_frame_address(0);
	const struct agent_thread *t = &agent_tls;
	struct path_cache *c;
	struct path_entry *e;
	uintptr_t *slot;
	unsigned b;
	int k, i, ok;

	*n = 0;
	*key = 0;
	c = path_cache_get();
	if (!c)
		return NULL;
	b = path_bucket(frame);
	for (e = c->bucket[b]; e; e = e->next)
		if (path_same(e, frame))
			return path_with_python(c, e->pc, (int)e->n, e->key, frame, n, key);
	/* Frame by frame, with each frame's stack pointer: the slot of a
	 * return address is that stack pointer - 8.  [0] returns here. */
	atomic_fetch_add_explicit(&path_misses, 1, memory_order_relaxed);
	modules_refresh();
	k = unwind_backtrace_sp(c->pc, c->sp, CBN_MAX_FRAMES + 1);
	if (k <= 1)
		return NULL;
	k--;
	ok = t->ustk_hi && frame >= t->ustk_lo;
	for (i = 1; i <= k && ok; i++)
		ok = c->sp[i] - 8 > frame && c->sp[i] <= t->ustk_hi && c->sp[i] % 8 == 0;
	if (!ok) /* not in this thread's known stack: returned, not cached */
		return path_with_python(c, c->pc + 1, k, path_key(c->pc + 1, k), frame, n, key);
	e = path_new(c, (uint32_t)k);
	e->frame = frame;
	memcpy(e->pc, c->pc + 1, (size_t)k * sizeof(e->pc[0]));
	slot = path_slot(e);
	for (i = 0; i < k; i++)
		slot[i] = c->sp[i + 1] - 8;
	e->key = path_key(e->pc, k);
	e->next = c->bucket[b];
	c->bucket[b] = e;
	return path_with_python(c, e->pc, k, e->key, frame, n, key);
}
