/*
 * python_walk.c — the calling thread's Python frames, read where the thread
 * stands: in the sampling signal handler, and in normal code for the CUDA
 * layer's and the allocation hooks' stacks (docs/agent.md section 17).  Each
 * frame becomes one CBN_PYW word, (code object's id, instruction index); the
 * code object's names and line table are copied once, by the thread whose
 * walk first meets it, at the end of that walk (python_copy.c); ids come from
 * the lock-free table kept here.
 *
 * SIGNAL-SAFE throughout (sigpath.h): no lock, no allocation, no call into
 * CPython.  Only this thread's own chain is read, which no other thread
 * changes; every pointer is checked before it is followed (python_stack).
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fastwalk.h"
#include "floor.h"
#include "python_copy.h"
#include "python_find.h"
#include "python_table.h"
#include "python_walk.h"

#define PY_USER_MAX 0x00007fffffffe000ull  /* highest user address on x86-64, page-aligned */

static void py_count(_Atomic uint64_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

/*
 * Each thread's last ids, direct-mapped by fingerprint: a hot loop's frames
 * find theirs in this thread's own cache lines instead of two random lines of
 * the 2.5 MiB table (measured: those two loads were half the walk's time,
 * bench/python.sh).  gen: the generation the id was confirmed in, so a fork
 * child (a new generation) goes to the table once per object and marks it
 * wanted there.  In the walk's per-thread mapping (fastwalk_aux), zeroed
 * at first (gen 0 is no generation): 512 entries, because a PyTorch loop's
 * samples hold a hundred and more code objects, which the 64 that fitted in
 * static TLS left to the table at most samples (python_code_id was a tenth
 * of the handler in perf).
 */
#define PY_TCACHE 512
struct py_tcache {
	uint64_t key;
	uint32_t id, stamp;              /* python_stamp when it was kept */
};

#define PY_TRAIL 64
struct py_trail {
	uintptr_t frame[PY_TRAIL], code[PY_TRAIL];
	uint16_t slot[PY_TRAIL];         /* the code's tcache slot */
	int n;
};

/* The thread's own part of the walk's mapping. */
struct py_aux {
	struct py_tcache tcache[PY_TCACHE];
	struct py_trail trail;
};
_Static_assert(sizeof(struct py_aux) <= FASTWALK_AUX_BYTES, "py_aux: in fastwalk_aux");

/* SIGNAL-SAFE: py_lookup through this thread's cache. */
static uint32_t py_id(struct py_aux *aux, uintptr_t code, uint64_t key, struct py_fresh *fresh)
{
	struct py_tcache *c = aux ? &aux->tcache[(key >> 11) & (PY_TCACHE - 1)] : NULL;
	uint32_t stamp = python_stamp(), id;

	if (c && c->key == key && c->stamp == stamp)
		return c->id;
	id = python_code_id(code, key, fresh);
	if (id && c) {
		c->key = key;
		c->id = id;
		c->stamp = stamp;
	}
	return id;
}

/* The code objects the thread's last walk met first (python_last_fresh). */
static __thread int py_fresh_last AGENT_TLS;

int python_last_fresh(void)
{
	return py_fresh_last;
}

/*
 * The trail: the last walk's frames and their code objects, leaf first.
 * The walk is pointer chasing: each frame's first field read and its code
 * object's type were the walk's two hottest loads in perf annotate (cache
 * misses after the program's own work since the last sample), each waiting
 * for the one before.  Most of a sample's frames are the last sample's, at
 * the same addresses: python_prefetch asks for all of them at once.
 */
void python_prefetch(void)
{
	const struct py_info *pi = atomic_load_explicit(&python_info, memory_order_relaxed);
	const struct py_aux *aux;
	const struct py_trail *tr;
	const struct cbn_py_layout *L;
	uintptr_t last = 0;
	int i, n;

	if (!pi || !(aux = fastwalk_aux(0)) || (n = (tr = &aux->trail)->n) <= 0)
		return;
	L = &pi->t.L;
	for (i = 0; i < n && i < PY_TRAIL; i++) {
		uintptr_t f = tr->frame[i], c = tr->code[i];

		__builtin_prefetch((const void *)(f + L->fr_previous));
		__builtin_prefetch((const void *)(f + L->fr_owner));
		if (c != last) {
			__builtin_prefetch((const void *)(c + L->ob_type));
			__builtin_prefetch((const void *)(c + L->co_consts));
			__builtin_prefetch((const void *)(c + L->co_flags));
			__builtin_prefetch(&aux->tcache[tr->slot[i] & (PY_TCACHE - 1)]);
			last = c;
		}
	}
}

/* --- the walk ---------------------------------------------------------------- */

#define PY_CHUNKS 16

struct py_walk {
	const struct py_info *pi;
	const struct cbn_py_layout *L;
	uintptr_t sp, stk_hi;            /* the live part of this thread's C stack, hi 0: unknown */
	uintptr_t lo[PY_CHUNKS], hi[PY_CHUNKS]; /* the thread's data-stack chunks */
	int nchunks;
	uintptr_t page[4];               /* pages checked mapped during this walk */
	int npages;
	struct py_fresh fresh;           /* ids to copy at the end of the walk */
	int checked;                     /* frames from the leaf py_leaf checked (py_frame_ok) */
};

/* SIGNAL-SAFE: the page is mapped (an rt_sigprocmask with an invalid how
 * copies the set in first, so it fails with EFAULT on an unmapped page and
 * changes no mask otherwise). */
static int py_page_ok(struct py_walk *w, uintptr_t page)
{
	int i, e;
	long r;

	for (i = 0; i < w->npages; i++)
		if (w->page[i] == page)
			return 1;
	e = errno;
	r = agent_syscall(SYS_rt_sigprocmask, ~0, (void *)page, NULL, 8);
	r = !(r < 0 && errno == EFAULT);
	errno = e;
	if (r)
		w->page[w->npages < 4 ? w->npages++ : 3] = page;
	return (int)r;
}

/* An address a user object may have. */
static int py_addr_ok(uintptr_t a)
{
	return a >= 4096 && a < PY_USER_MAX && !(a & 7);
}

/*
 * SIGNAL-SAFE.  A frame pointer of this thread's own chain is followed only
 * where a frame of this thread can live: one of its data-stack chunks (frames
 * of functions), the live part of its C stack (3.12+'s entry frames), or a
 * mapped heap object (the frame of a generator or coroutine, inside the
 * object that holds it).  Chunks are unlinked from the thread state before
 * they are freed, and a frame is unlinked from the chain before it is cleared
 * (CPython gh-99729), so a pointer that passes lies in memory that stays while
 * the thread is stopped here.  Another thread's chain is read by copies.
 */
static inline __attribute__((always_inline)) int py_frame_ok(struct py_walk *w, uintptr_t f)
{
	uintptr_t end;
	int i;

	if (!py_addr_ok(f))
		return 0;
	end = f + w->L->fr_size;
	for (i = 0; i < w->nchunks; i++)
		if (f >= w->lo[i] && end <= w->hi[i])
			return 1;
	if (w->stk_hi && f >= w->sp && end <= w->stk_hi)
		return 1;
	return py_page_ok(w, f & ~(uintptr_t)4095) && py_page_ok(w, (end - 1) & ~(uintptr_t)4095);
}

static inline uint64_t py_u64(const unsigned char *b, uint32_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

/* SIGNAL-SAFE: the live part of the thread state's data-stack chunks,
 * newest first: the newest up to the thread's top, each older one up to the
 * top it kept when a newer one was pushed (a frame's memory above it is
 * stale). */
static void py_chunks(struct py_walk *w, uintptr_t tstate)
{
	uintptr_t c = *(const uintptr_t *)(tstate + w->L->ts_datastack);
	uintptr_t top = *(const uintptr_t *)(tstate + w->L->ts_datastack + 8);

	w->nchunks = 0;
	while (c && py_addr_ok(c) && w->nchunks < PY_CHUNKS) {
		uint64_t size = *(const uint64_t *)(c + 8);

		if (size < 64 || size > (1ull << 32))
			break;
		w->lo[w->nchunks] = c + 24;  /* _PyStackChunk: previous, size, top, data[] */
		w->hi[w->nchunks] = top > c + 24 && top <= c + size ? top : c + 24;
		w->nchunks++;
		c = *(const uintptr_t *)c;
		if (c)
			top = c + 24 + 8 * *(const uint64_t *)(c + 16);
	}
}

/*
 * SIGNAL-SAFE.  3.11 and 3.12: the evaluation loop's newest activation
 * points tstate->cframe at its own _PyCFrame before it sets that cframe's
 * current_frame, so a sample between the two stores reads an uninitialized
 * stack slot: a stale pointer whose code field may name freed, unmapped
 * memory (a crash under 3.11's --calls, where every Python call is such an
 * activation).  The older activation's current frame (in pcf, the cframe's
 * previous) was set before the newer one began.  So f, the newest one's, is
 * taken only when its chain, read without following a code pointer,
 * reaches the activation's entry (3.11: the frame marked is_entry; 3.12:
 * the C-stack entry frame) whose previous is that older frame; otherwise
 * the walk starts from the older frame, as if the new call had not begun.
 * Returns the frame to walk from (0: none), or 1 when pcf is no cframe.
 */
static uintptr_t py_leaf(struct py_walk *w, uintptr_t tstate, uintptr_t f, uintptr_t pcf)
{
	const struct cbn_py_layout *L = w->L;
	uintptr_t old, g = f;
	int n;

	if (!py_addr_ok(pcf) ||
	    !((pcf >= tstate && pcf < tstate + 4096) || (w->stk_hi && pcf >= w->sp && pcf < w->stk_hi)))
		return 1;
	old = *(const uintptr_t *)(pcf + L->cf_current);
	for (n = 0; g && n < 4096 && py_frame_ok(w, g); n++) {
		const unsigned char *fr = (const unsigned char *)g;
		uintptr_t prev = py_u64(fr, L->fr_previous);

		if (L->fr_is_entry >= 0 ? fr[L->fr_is_entry] != 0 : fr[L->fr_owner] >= L->owner_marker) {
			if (prev != old)
				return old;
			w->checked = n + 1; /* py_chain's first steps: these frames */
			return f;
		}
		g = prev;
	}
	return old;
}

static int py_unread(int why)
{
	struct cbn_file_header *h = agent.w.hdr;

	if (h)
		py_count(&h->python.unread[why], 1);
	return 0;
}

/*
 * SIGNAL-SAFE.  The chain from frame f as CBN_PYW words, leaf first, at most
 * max; 0, counted by reason, when it fails a check.
 */
static int py_chain(struct py_walk *w, uintptr_t f, uint64_t *out, int max)
{
	const struct py_info *pi = w->pi;
	const struct cbn_py_layout *L = w->L;
	struct cbn_file_header *h = agent.w.hdr;
	const unsigned char *fr;
	uintptr_t code, next, last_code = 0;
	uint64_t last_units = 0, last_key = 0;
	uint32_t last_id = 0;
	int n = 0, steps = 0;
	struct py_aux *aux = fastwalk_aux(1);
	struct py_trail *tr = aux ? &aux->trail : NULL;

	if (L->fr_size > 256)
		return 0;
	if (tr)
		tr->n = 0;
	/* max + 8: past the last word kept, look whether real frames follow */
	for (; f && steps < max + 8; f = next, steps++) {
		uint64_t units, key;
		int64_t u;
		uint32_t flags = 0, unit;

		if (steps >= w->checked && !py_frame_ok(w, f))
			return py_unread(CBN_PYU_BAD_FRAME);
		/* Read in place: the frame is this thread's own, which the
		 * handler interrupted, so nothing changes it while it is read
		 * (a copy first cost a store-forwarding stall at every field:
		 * a third of the walk). */
		fr = (const unsigned char *)f;
		next = py_u64(fr, L->fr_previous);
		if (next == f)
			return py_unread(CBN_PYU_BAD_FRAME);
		if (fr[L->fr_owner] >= L->owner_marker) {
			/* 3.12+: the C entry frame below an activation's first frame */
			if (n)
				out[n - 1] |= (uint64_t)CBN_PYW_ENTRY << 48;
			continue;
		}
		if (n == max) {
			out[n - 1] |= (uint64_t)CBN_PYW_TRUNC << 48;
			break;
		}
		code = py_u64(fr, L->fr_code);
		if (code != last_code || !last_id) {
			if (!py_addr_ok(code))
				return py_unread(CBN_PYU_BAD_CODE);
			/* Its own frame holds a strong reference: a live object
			 * (read field by field: three cache lines, not the whole
			 * header). */
			if (*(const uintptr_t *)(code + L->ob_type) != pi->t.code_type)
				return py_unread(CBN_PYU_BAD_CODE);
			units = *(const uint64_t *)(code + L->ob_size);
			key = cbn_py_code_key(code, *(const uint64_t *)(code + L->co_consts),
					      *(const uint64_t *)(code + L->co_names),
					      *(const uint32_t *)(code + L->co_flags), units);
			last_code = code;
			last_units = units;
			last_key = key;
			last_id = py_id(aux, code, key, &w->fresh);
		} else {
			/* the frame below ran the same code object (a recursion):
			 * checked and named a frame ago in this walk, and alive
			 * while both frames hold it */
			units = last_units;
		}
		u = ((int64_t)py_u64(fr, L->fr_instr) - (int64_t)(code + L->co_code)) / 2;
		/* prev_instr (3.11, 3.12) is one unit before the first instruction
		 * in a new frame: u == -1, the function's first line */
		unit = u >= -1 && u < (int64_t)units && u + 1 < CBN_PYW_UNIT_UNKNOWN
			       ? (uint32_t)(u + 1)
			       : CBN_PYW_UNIT_UNKNOWN;
		if (L->fr_is_entry >= 0 && fr[L->fr_is_entry])
			flags |= CBN_PYW_ENTRY;
		if (tr && tr->n < PY_TRAIL) {
			tr->frame[tr->n] = f;
			tr->code[tr->n] = code;
			tr->slot[tr->n++] = (uint16_t)((last_key >> 11) & (PY_TCACHE - 1));
		}
		out[n++] = CBN_PYW_MAKE(flags, last_id, unit);
	}
	if (n && h) {
		py_count(&h->python.stacks, 1);
		py_count(&h->python.frames, (uint64_t)n);
		if (CBN_PYW_FLAGS(out[n - 1]) & CBN_PYW_TRUNC)
			py_count(&h->python.truncated, 1);
	}
	return n;
}

/*
 * SIGNAL-SAFE.  The calling thread's Python frames as CBN_PYW words, leaf
 * first, at most max: 0 for a thread that runs no Python (no thread state, or
 * an interpreter not initialized yet), and 0, counted by reason, for a chain
 * that fails a check (the stack then stays native).  sp: the stack pointer of
 * this thread's stack at the point unwound (the interrupted one in the
 * handler), the bottom of the live C stack.
 */
int python_stack(uint64_t *out, int max, uintptr_t sp)
{
	const struct py_info *pi = atomic_load_explicit(&python_info, memory_order_acquire);
	const struct cbn_py_layout *L;
	struct py_walk w;
	const int *tss;
	uintptr_t tstate, f, fin;
	int n;

	if (!pi || max <= 0 || !python_codes)
		return 0;
	L = &pi->t.L;
	tss = (const int *)(pi->t.runtime + L->rt_tss);
	if (!tss[0]) /* Py_tss_t._is_initialized: the runtime is not up yet */
		return 0;
	tstate = (uintptr_t)pthread_getspecific((pthread_key_t)tss[1]);
	if (!tstate)
		return 0; /* a thread Python never ran on */
	if (!py_addr_ok(tstate) ||
	    (agent_tls.tid && *(const uint64_t *)(tstate + L->ts_native_tid) != agent_tls.tid))
		return py_unread(CBN_PYU_BAD_TSTATE);
	/* _PyRuntime._finalizing names the thread state that finalizes: the
	 * others may be freed under their threads (daemon threads), its own
	 * chain stays as safe to read as before */
	fin = *(const uintptr_t *)(pi->t.runtime + L->rt_finalizing);
	if (fin && fin != tstate)
		return py_unread(CBN_PYU_FINALIZING);
	memset(&w, 0, sizeof(w));
	w.pi = pi;
	w.L = L;
	w.sp = sp;
	w.stk_hi = agent_tls.ustk_hi;
	py_chunks(&w, tstate);
	if (L->ts_cframe >= 0) {
		/* 3.11, 3.12: tstate->cframe, on the C stack or inside the state */
		uintptr_t cf = *(const uintptr_t *)(tstate + (uint32_t)L->ts_cframe), pcf;

		if (!py_addr_ok(cf) ||
		    !((cf >= tstate && cf < tstate + 4096) || (w.stk_hi && cf >= sp && cf < w.stk_hi) ||
		      py_page_ok(&w, cf & ~(uintptr_t)4095)))
			return py_unread(CBN_PYU_BAD_TSTATE);
		f = *(const uintptr_t *)(cf + L->cf_current);
		/* _PyCFrame.previous follows current_frame in both versions;
		 * the root cframe (inside the state) has none */
		pcf = *(const uintptr_t *)(cf + L->cf_current + 8);
		if (f && pcf) {
			f = py_leaf(&w, tstate, f, pcf);
			if (f == 1)
				return py_unread(CBN_PYU_BAD_TSTATE);
		}
	} else {
		f = *(const uintptr_t *)(tstate + L->cf_current);
	}
	if (!f)
		return 0;
	n = py_chain(&w, f, out, max);
	py_fresh_last = w.fresh.n;
	python_copy_ids(w.fresh.id, w.fresh.n);
	return n;
}

/* SIGNAL-SAFE: 1 when an interpreter is read (a stack may get Python words). */
int python_active(void)
{
	return atomic_load_explicit(&python_info, memory_order_relaxed) != NULL;
}

/*
 * SIGNAL-SAFE.  python_stack for a stack of at most cap words in all: the
 * Python frames take at most cap - min(cap / 2, 64), so that the native
 * frames keep at least half of a small budget and 64 of a large one; the
 * caller unwinds the native frames into cap minus what this returns.
 */
int python_stack_for(uint64_t *out, int cap, uintptr_t sp)
{
	if (!atomic_load_explicit(&python_info, memory_order_relaxed) || cap < 2)
		return 0;
	return python_stack(out, cap - (cap / 2 < 64 ? cap / 2 : 64), sp);
}
