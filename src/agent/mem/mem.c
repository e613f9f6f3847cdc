/*
 * mem.c — the allocation hooks' core: usable sizes, Poisson byte sampling,
 * the exact counters of header.mem (per-thread deltas), the MEM_ALLOC/MEM_FREE
 * records and the live table, start-up, fork and thread exit.  The interposed
 * functions themselves are in hooks.c, the real allocator's lookup in real.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mem.h"
#include "agent_api.h"
#include "../../format/cbn_time.h"
#include "../../format/cbn_weight.h"

#define MEM_DEFAULT_RATE 524288ull
#define MEM_DEFAULT_DEPTH 128
/* Live table: 2^21 slots (32 MiB, after levels of 2^14 and 2^17 that a
 * sampling run's few live blocks stay in: memtable.h) and 2^20 filter
 * counters (4 MiB, one per page of 4 GiB of address space), mapped
 * MAP_NORESERVE: with the per-thread state and the records' stack buffers
 * the agent's memory for host allocations stays under 64 MiB whatever the
 * allocation count; a sampled block that finds no slot is counted untracked. */
#define MEM_TABLE_BITS 21
#define MEM_FILTER_BITS 20
/* Frames between cbn_agent_mem_backtrace and the program: the hook,
 * mem_alloc_done and mem_record_alloc (all noinline, and the library is
 * built without sibling-call optimisation so that none becomes a jump). */
#define MEM_SKIP 3

struct memtable mem_table;
_Atomic int mem_fast;
__thread struct mem_thread mem_tls MEM_TLS;

enum { MEM_EARLY = 0, MEM_RECORDING = 1, MEM_OFF = 2 };
static _Atomic int mem_mode;              /* EARLY until the constructor */
static struct cbn_mem_state *_Atomic mem_st;
static _Atomic uint32_t mem_pid;          /* the process mem_st belongs to */
static uint64_t mem_rate = MEM_DEFAULT_RATE;
static int mem_depth = MEM_DEFAULT_DEPTH;
static _Atomic int mem_usable_glibc;      /* mem_usable reads glibc's chunk header itself */

/* The threads' pending counts (struct mem_counts), one cache line each,
 * mapped at the first need; a thread takes a slot at its first counted call
 * and gives it back at its end.  MEM_SLOTS threads at once; more keep their
 * counts in TLS (flushed at the thresholds, at their end and at exit()). */
#define MEM_SLOTS 4096
static struct mem_counts *mem_slots;
static _Atomic int mem_collected;         /* exit collected every slot: flush no more */

/* Counts made before the session was open (the agent's own start-up, the
 * loader): folded into header.mem when recording starts. */
static _Atomic int64_t early_live;
static _Atomic uint64_t early_allocs, early_frees, early_bytes;

/*
 * glibc's malloc_usable_size costs as much as a malloc (it is an exported
 * call that checks its arguments and memory tagging): with libc's malloc the
 * hooks read the chunk header themselves, as its musable() does: the size
 * word before the block, low 3 bits flags; an mmapped chunk (bit 1) has a
 * 16-byte header, any other 8.  Used only after checking it against the
 * real function on blocks of every kind (small, large, mmapped, aligned).
 */
static size_t mem_usable_chunk(void *p)
{
	size_t head = ((const size_t *)p)[-1];

	return (head & ~(size_t)7) - ((head & 2) ? 16 : 8);
}

/*
 * No probe at start: allocating and freeing blocks of every size would move
 * glibc's dynamic mmap and trim thresholds (freeing an mmapped chunk raises
 * them to its size) for the whole run.  Instead the first MEM_USABLE_CHECKS
 * blocks of each kind (mmapped or not) that reach mem_usable are read both
 * ways; one disagreement and the real function is used from then on.
 */
#define MEM_USABLE_CHECKS 16
static _Atomic int mem_usable_left[2] = {MEM_USABLE_CHECKS, MEM_USABLE_CHECKS};

/* The fast path (mem.h) runs while recording at a sampling rate with glibc's
 * chunk headers read, once the first blocks' headers agreed with
 * malloc_usable_size (mmapped chunks never take it). */
static int mem_fast_allowed(void)
{
	return atomic_load(&mem_mode) == MEM_RECORDING && mem_rate > 1 &&
	       atomic_load(&mem_usable_glibc) && atomic_load(&mem_usable_left[0]) <= 0;
}

/* Called by whoever changed a condition; the second look undoes a store of
 * 1 that raced with another thread's change to 0. */
static void mem_fast_update(void)
{
	atomic_store(&mem_fast, mem_fast_allowed());
	if (!mem_fast_allowed())
		atomic_store(&mem_fast, 0);
}

size_t mem_usable(void *p)
{
	size_t u;
	int kind;

	if (!atomic_load_explicit(&mem_usable_glibc, memory_order_relaxed))
		return mem_real.usable(p);
	u = mem_usable_chunk(p);
	kind = (((const size_t *)p)[-1] & 2) != 0;
	if (atomic_load_explicit(&mem_usable_left[kind], memory_order_relaxed) > 0) {
		size_t real = mem_real.usable(p);

		if (real != u) {
			atomic_store(&mem_usable_glibc, 0);
			mem_fast_update();
			return real;
		}
		if (atomic_fetch_sub_explicit(&mem_usable_left[kind], 1, memory_order_relaxed) == 1)
			mem_fast_update();
	}
	return u;
}

/* --- counters --------------------------------------------------------------- */

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif

/*
 * The process the hooks are attached to, known without a system call: its
 * pid in a page marked MADV_WIPEONFORK, which reads 0 in a child made
 * without CLONE_VM (fork, or a raw clone that runs no atfork handler) until
 * the child's handler attaches it to its own file.  Where the kernel lacks
 * it (before 4.14), getpid() at each look, as before: 1.5 us a call in a
 * VM, three calls for each sampled block (its record, its free's, a
 * flush's) were a third of a sampled block's cost.
 */
static _Atomic uint32_t *mem_pid_word;

static void mem_attach_pid(void)
{
	uint32_t pid = (uint32_t)syscall(SYS_getpid);
	void *p;

	if (!mem_pid_word && mem_real.mmap) {
		p = mem_real.mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				  -1, 0);
		if (p != MAP_FAILED && madvise(p, 4096, MADV_WIPEONFORK) == 0)
			mem_pid_word = p;
		else if (p != MAP_FAILED)
			mem_real.munmap(p, 4096);
	}
	atomic_store(&mem_pid, pid);
	if (mem_pid_word)
		atomic_store(mem_pid_word, pid);
}

/* 1 in the process whose file the hooks write (not a fork child before its
 * handler has run). */
static int mem_attached(void)
{
	uint32_t pid = atomic_load_explicit(&mem_pid, memory_order_relaxed);

	if (__builtin_expect(mem_pid_word != NULL, 1))
		return atomic_load_explicit(mem_pid_word, memory_order_relaxed) == pid;
	return (uint32_t)syscall(SYS_getpid) == pid;
}

/*
 * header.mem while recording, else NULL.  A fork child runs code (the
 * agent's fork handler, which unmaps the parent's file and allocates) before
 * the hooks' own child handler re-attaches them: until then nothing touches
 * a header or a chunk.  Called only on the rare paths (flushes, sampled
 * records, mappings).
 */
static struct cbn_mem_state *mem_header(void)
{
	struct cbn_mem_state *st = atomic_load_explicit(&mem_st, memory_order_acquire);

	if (!st || atomic_load_explicit(&mem_mode, memory_order_relaxed) != MEM_RECORDING ||
	    !mem_attached())
		return NULL;
	return st;
}

static void mem_peak(struct cbn_mem_state *st, int64_t live)
{
	uint64_t peak;

	if (live <= 0)
		return;
	peak = atomic_load_explicit(&st->host_peak, memory_order_relaxed);
	while ((uint64_t)live > peak) {
		if (atomic_compare_exchange_weak(&st->host_peak, &peak, (uint64_t)live)) {
			atomic_store_explicit(&st->host_peak_ts, cbn_clock_ns(CLOCK_MONOTONIC),
					      memory_order_relaxed);
			break;
		}
	}
}

/* Add counts c to the header (or, before the session, to the early ones). */
static int mem_publish(const struct mem_counts *c)
{
	int mode = atomic_load_explicit(&mem_mode, memory_order_relaxed);
	struct cbn_mem_state *st = NULL;
	int64_t d = c->delta;

	if (mode == MEM_RECORDING) {
		st = mem_header();
		if (!st)
			return -1; /* a fork child not re-attached yet: keep the counts */
	}
	if (st) {
		if (d)
			mem_peak(st, atomic_fetch_add(&st->host_live, d) + d);
		atomic_fetch_add_explicit(&st->allocs, c->allocs, memory_order_relaxed);
		atomic_fetch_add_explicit(&st->frees, c->frees, memory_order_relaxed);
		atomic_fetch_add_explicit(&st->alloc_bytes, c->bytes, memory_order_relaxed);
	} else if (mode == MEM_EARLY) {
		atomic_fetch_add(&early_live, d);
		atomic_fetch_add(&early_allocs, c->allocs);
		atomic_fetch_add(&early_frees, c->frees);
		atomic_fetch_add(&early_bytes, c->bytes);
	}
	return 0;
}

/* Publish this thread's deltas. */
static void mem_flush(struct mem_thread *t)
{
	struct mem_counts *c = t->c;

	if (atomic_load_explicit(&mem_collected, memory_order_relaxed) || mem_publish(c) < 0)
		return;
	c->delta = 0;
	c->allocs = c->frees = c->bytes = 0;
}

/* The thread's counts: its slot, taken at its first counted call (lock-free:
 * a CAS on a free slot's flag), else its TLS. */
static struct mem_counts *mem_counts_take(struct mem_thread *t)
{
	unsigned i, start;
	uint32_t zero;

	t->c = &t->own;
	if (!mem_slots) {
		void *m = mem_real.mmap ? mem_real.mmap(NULL, MEM_SLOTS * sizeof(struct mem_counts),
							PROT_READ | PROT_WRITE,
							MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
					: MAP_FAILED;
		struct mem_counts *none = NULL;

		if (m == MAP_FAILED)
			return t->c;
		if (!atomic_compare_exchange_strong((struct mem_counts *_Atomic *)&mem_slots, &none,
						    (struct mem_counts *)m))
			mem_real.munmap(m, MEM_SLOTS * sizeof(struct mem_counts));
	}
	start = (unsigned)((uintptr_t)t >> 6) % MEM_SLOTS;
	for (i = 0; i < MEM_SLOTS; i++) {
		struct mem_counts *c = &mem_slots[(start + i) % MEM_SLOTS];

		zero = 0;
		if (!atomic_load_explicit(&c->used, memory_order_relaxed) &&
		    atomic_compare_exchange_strong(&c->used, &zero, 1)) {
			c->allocs = c->frees = c->bytes = 0;
			c->delta = 0;
			t->c = c;
			break;
		}
	}
	return t->c;
}

static inline struct mem_counts *mem_counts(struct mem_thread *t)
{
	return __builtin_expect(t->c != NULL, 1) ? t->c : mem_counts_take(t);
}

static inline void mem_maybe_flush(struct mem_thread *t)
{
	struct mem_counts *c = t->c;

	/* Exact mode: every call at once (whatever ends the process, nothing
	 * is left behind in a thread); else at the thresholds. */
	if (mem_rate <= 1 || c->delta >= (int64_t)CBN_MEM_FLUSH ||
	    c->delta <= -(int64_t)CBN_MEM_FLUSH || c->allocs + c->frees >= MEM_FLUSH_CALLS)
		mem_flush(t);
}

/* The agent's callback at a thread's end (threads.c, the raw exit system
 * call): its counts into the header, its slot free again. */
static void mem_thread_end(void)
{
	struct mem_thread *t = &mem_tls;

	if (!t->c)
		return;
	t->in_hook++;
	mem_flush(t);
	if (t->c != &t->own)
		atomic_store(&t->c->used, 0);
	t->c = NULL;
	t->in_hook--;
}

/*
 * The process ends (exit, _exit): every thread's pending counts into the
 * header, read from their slots (the other threads may still run: what
 * they count from now on is not published), then no flush any more.
 */
static void mem_collect_all(void)
{
	unsigned i;

	/* under a seccomp filter (mem_sandbox): no system call */
	if (mem_tls.in_hook >= 1 << 20)
		return;
	mem_tls.in_hook++;
	if (mem_tls.c)
		mem_flush(&mem_tls);
	if (mem_slots && !atomic_exchange(&mem_collected, 1))
		for (i = 0; i < MEM_SLOTS; i++)
			if (atomic_load(&mem_slots[i].used) && &mem_slots[i] != mem_tls.c)
				mem_publish(&mem_slots[i]);
	mem_tls.in_hook--;
}

/* The agent's callback when the calling thread (all: every thread) comes
 * under a seccomp filter of the program's: pass straight through from now
 * on, after publishing what is pending (sandbox.c). */
static void mem_sandbox(int all)
{
	if (mem_tls.c)
		mem_thread_end();
	mem_tls.in_hook = 1 << 20; /* for good */
	if (all) {
		atomic_store(&mem_mode, MEM_OFF);
		mem_fast_update();
	}
}

/* Reserved address space (PROT_NONE mappings) changes its own counters,
 * never host_live: the header holding st (cbn_agent_mem_state's). */
static void mem_reserve_live(int64_t d)
{
	struct cbn_mem_state *st = mem_header();
	struct cbn_file_header *h;
	uint64_t peak;
	int64_t live;

	if (!st)
		return;
	h = (struct cbn_file_header *)((char *)st - offsetof(struct cbn_file_header, mem));
	live = atomic_fetch_add(&h->mem_reserved_live, d) + d;
	peak = atomic_load_explicit(&h->mem_reserved_peak, memory_order_relaxed);
	while (live > 0 && (uint64_t)live > peak &&
	       !atomic_compare_exchange_weak(&h->mem_reserved_peak, &peak, (uint64_t)live))
		;
}

void mem_reserve_done(void *p, size_t size)
{
	if (atomic_load_explicit(&mem_mode, memory_order_relaxed) == MEM_OFF || !p)
		return;
	mem_reserve_live((int64_t)size);
	memtable_insert(&mem_table, (uint64_t)(uintptr_t)p, mem_val(size, MEM_KIND_RESERVE, 0));
}

/* Mappings change host_live at once (they are few and large). */
static void mem_map_live(int64_t d)
{
	struct cbn_mem_state *st = mem_header();

	if (st) {
		atomic_fetch_add(&st->mmap_live, d);
		mem_peak(st, atomic_fetch_add(&st->host_live, d) + d);
	} else if (atomic_load_explicit(&mem_mode, memory_order_relaxed) == MEM_EARLY) {
		atomic_fetch_add(&early_live, d);
	}
}

/* --- sampling ------------------------------------------------------------- */

static uint64_t mem_rand(struct mem_thread *t)
{
	/* xorshift64*: per thread, no state shared. */
	uint64_t x = t->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	t->rng = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* Bytes to the next sample point: exponential with mean mem_rate. */
static int64_t mem_draw(struct mem_thread *t)
{
	double u;

	if (!t->seeded) {
		t->rng = ((uint64_t)(uintptr_t)t * 0x9e3779b97f4a7c15ull) ^
			 cbn_clock_ns(CLOCK_MONOTONIC) ^ ((uint64_t)syscall(SYS_gettid) << 32);
		if (!t->rng)
			t->rng = 1;
		t->seeded = 1;
	}
	u = (double)((mem_rand(t) >> 11) + 1) * (1.0 / 9007199254740992.0); /* (0, 1] */
	return (int64_t)(-log(u) * (double)mem_rate) + 1;
}

/* 1 when an allocation of size bytes holds a sample point. */
static inline int mem_sample(struct mem_thread *t, size_t size)
{
	if (mem_rate <= 1)
		return 1;
	if (!t->seeded)
		t->left = mem_draw(t);
	t->left -= (int64_t)size;
	if (t->left > 0)
		return 0;
	/* Memoryless: a fresh draw from here is the next point. */
	t->left = mem_draw(t);
	return 1;
}

/* Bytes one sampled block of size bytes stands for (cbn_weight.h). */
static double mem_weight(uint64_t size)
{
	return cbn_mem_weight_bytes(size, mem_rate);
}

static uint32_t mem_tid(struct mem_thread *t)
{
	if (!t->tid)
		t->tid = (uint32_t)syscall(SYS_gettid);
	return t->tid;
}

/* --- records -------------------------------------------------------------- */

/* Returns 0 when the record is in the file. */
static __attribute__((noinline)) int mem_record_alloc(void *p, size_t size, int kind, int fn)
{
	struct cbn_mem_state *st = mem_header();
	struct {
		struct cbn_rec_mem_alloc r;
		uint64_t pc[CBN_MAX_FRAMES];
	} b;
	int n;

	if (!st)
		return -1;
	n = cbn_agent_mem_backtrace(b.pc, mem_depth, MEM_SKIP);
	if (n == 0)
		atomic_fetch_add_explicit(&st->no_stack, 1, memory_order_relaxed);
	memset(&b.r, 0, sizeof(b.r));
	b.r.h.type = CBN_REC_MEM_ALLOC;
	b.r.h.size = (uint32_t)(sizeof(b.r) + (size_t)n * sizeof(uint64_t));
	b.r.ts = cbn_clock_ns(CLOCK_MONOTONIC);
	b.r.addr = (uint64_t)(uintptr_t)p;
	b.r.size = size;
	b.r.tid = mem_tid(&mem_tls);
	b.r.kind = (uint8_t)kind;
	b.r.fn = (uint8_t)fn;
	b.r.nframes = (uint16_t)n;
	if (cbn_agent_mem_write(&b, b.r.h.size, b.r.tid) < 0) {
		atomic_fetch_add_explicit(&st->lost, 1, memory_order_relaxed);
		return -1;
	}
	atomic_fetch_add_explicit(&st->sampled, 1, memory_order_relaxed);
	return 0;
}

static void mem_record_free(void *p, uint64_t val, int fn)
{
	struct cbn_mem_state *st = mem_header();
	struct cbn_rec_mem_free r;

	if (!st)
		return;
	memset(&r, 0, sizeof(r));
	r.h.type = CBN_REC_MEM_FREE;
	r.h.size = sizeof(r);
	r.ts = cbn_clock_ns(CLOCK_MONOTONIC);
	r.addr = (uint64_t)(uintptr_t)p;
	r.size = mem_val_size(val);
	r.tid = mem_tid(&mem_tls);
	r.kind = (uint8_t)mem_val_kind(val);
	r.fn = (uint8_t)fn;
	(void)cbn_agent_mem_write(&r, sizeof(r), r.tid);
}

/* --- accounting entry points (mem.h) -------------------------------------- */

__attribute__((noinline)) void mem_alloc_done(void *p, size_t size, int kind, int fn)
{
	struct mem_thread *t = &mem_tls;
	int mode = atomic_load_explicit(&mem_mode, memory_order_relaxed);
	int sampled, tracked = 1;
	size_t counted = size;
	struct mem_counts *c;

	if (mode == MEM_OFF || !p)
		return;
	c = mem_counts(t);
	if (kind == CBN_ALLOC_HEAP && mem_usable_ok)
		counted = mem_usable(p);
	c->allocs++;
	c->bytes += counted;
	sampled = mem_sample(t, size);
	/* Outside capture windows (docs/steps.md) no allocation is recorded:
	 * the counters run on, the sample point is spent.  Frees of blocks
	 * recorded inside a window are still written (live bytes stay right). */
	if (sampled && !cbn_agent_capture_active())
		sampled = 0;
	if (kind == CBN_ALLOC_HEAP) {
		if (mem_usable_ok)
			c->delta += (int64_t)counted;
		else if (sampled && mode == MEM_RECORDING)
			c->delta += (int64_t)mem_weight(size);
	} else if (kind == CBN_ALLOC_MMAP) {
		mem_map_live((int64_t)size);
	}
	/* Blocks are recorded (and tracked) only once the session is open;
	 * every mapping is tracked so that munmap accounting is exact. */
	if ((sampled && mode == MEM_RECORDING && kind != CBN_ALLOC_BRK) || kind == CBN_ALLOC_MMAP) {
		if (memtable_insert(&mem_table, (uint64_t)(uintptr_t)p,
				    mem_val(size, kind, sampled && mode == MEM_RECORDING)) < 0) {
			struct cbn_mem_state *st = mem_header();

			tracked = 0;
			if (st && sampled)
				atomic_fetch_add_explicit(&st->untracked, 1, memory_order_relaxed);
		}
	}
	if (sampled && mode == MEM_RECORDING && mem_record_alloc(p, size, kind, fn) < 0 &&
	    tracked && kind != CBN_ALLOC_BRK) {
		/* No MEM_ALLOC in the file: its free must not write a MEM_FREE.
		 * The block is not the program's yet, so nobody else frees it. */
		uint64_t v;

		if (memtable_remove(&mem_table, (uint64_t)(uintptr_t)p, &v)) {
			if (!mem_usable_ok && kind == CBN_ALLOC_HEAP)
				c->delta -= (int64_t)mem_weight(size);
			if (kind == CBN_ALLOC_MMAP)
				memtable_insert(&mem_table, (uint64_t)(uintptr_t)p,
						mem_val(size, kind, 0));
		}
	}
	mem_maybe_flush(t);
}

uint64_t mem_free_begin(void *p, int fn)
{
	struct mem_thread *t = &mem_tls;
	int mode = atomic_load_explicit(&mem_mode, memory_order_relaxed);
	int mapping = fn == CBN_AFN_MUNMAP || fn == CBN_AFN_MREMAP;
	uint64_t val = 0;
	struct mem_counts *c;

	if (mode == MEM_OFF || !p)
		return 0;
	c = mem_counts(t);
	if (!mapping) {
		c->frees++;
		if (mem_usable_ok)
			c->delta -= (int64_t)mem_usable(p);
	}
	if (memtable_maybe(&mem_table, (uint64_t)(uintptr_t)p) &&
	    memtable_remove(&mem_table, (uint64_t)(uintptr_t)p, &val)) {
		if (mem_val_kind(val) == CBN_ALLOC_MMAP) {
			c->frees++;
			mem_map_live(-(int64_t)mem_val_size(val));
		} else if (mem_val_kind(val) == MEM_KIND_RESERVE) {
			mem_reserve_live(-(int64_t)mem_val_size(val));
		} else if (!mem_usable_ok && mem_val_sampled(val)) {
			c->delta -= (int64_t)mem_weight(mem_val_size(val));
		}
		if (mem_val_sampled(val))
			mem_record_free(p, val, fn);
	}
	mem_maybe_flush(t);
	return val;
}

void mem_free_undo(void *p, uint64_t val, int fn)
{
	struct mem_counts *c;

	if (!p || atomic_load_explicit(&mem_mode, memory_order_relaxed) == MEM_OFF)
		return;
	c = mem_counts(&mem_tls);
	if (fn != CBN_AFN_MUNMAP && fn != CBN_AFN_MREMAP) {
		/* A heap block a failed realloc left in place: live again, and
		 * no longer sampled (its MEM_FREE is written). */
		c->frees--;
		if (mem_usable_ok)
			c->delta += (int64_t)mem_usable(p);
		return;
	}
	if (!val)
		return;
	if (mem_val_kind(val) == MEM_KIND_RESERVE) {
		mem_reserve_live((int64_t)mem_val_size(val));
		memtable_insert(&mem_table, (uint64_t)(uintptr_t)p, val);
		return;
	}
	c->frees--;
	mem_map_live((int64_t)mem_val_size(val));
	memtable_insert(&mem_table, (uint64_t)(uintptr_t)p,
			mem_val(mem_val_size(val), CBN_ALLOC_MMAP, 0));
}

void mem_unmap_done(void *p, size_t len, uint64_t val)
{
	uint64_t size = mem_val_size(val), page = 4096;

	len = (len + page - 1) & ~(page - 1);
	if (!val || len >= size)
		return;
	/* munmap of the start of a mapping: the rest stays live (or reserved). */
	if (mem_val_kind(val) == MEM_KIND_RESERVE) {
		mem_reserve_live((int64_t)(size - len));
		memtable_insert(&mem_table, (uint64_t)(uintptr_t)p + len,
				mem_val(size - len, MEM_KIND_RESERVE, 0));
		return;
	}
	mem_map_live((int64_t)(size - len));
	memtable_insert(&mem_table, (uint64_t)(uintptr_t)p + len,
			mem_val(size - len, CBN_ALLOC_MMAP, 0));
}

/* --- start-up, fork, exit --------------------------------------------------- */

/* For the agent: this library is preloaded (agent.c looks for it). */
MEM_API const int cbn_mem_hooks_present = 1;

static void mem_refuse(struct cbn_mem_state *st, const char *why)
{
	snprintf(st->reason, sizeof(st->reason), "%s", why);
	st->reason_len = (uint32_t)strlen(st->reason);
	atomic_store(&st->state, CBN_MEM_REFUSED);
}

/* The live table's size: 2^MEM_TABLE_BITS slots and 2^MEM_FILTER_BITS
 * counters, an eighth of that under a finite RLIMIT_AS (its address space
 * counts there, touched or not).  Returns 0 under such a limit. */
static int mem_table_full_size(void)
{
	struct rlimit rl;

	return !(getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY);
}

/* Start recording into the session the agent has open (constructor, fork
 * child).  Returns 1 when recording. */
static int mem_start(int child)
{
	struct cbn_mem_state *st = cbn_agent_mem_state();
	unsigned less;

	if (!st) {
		atomic_store(&mem_mode, MEM_OFF);
		mem_fast_update();
		return 0;
	}
	if (child) {
		/* The agent copied the parent's state into the new header. */
		atomic_store(&mem_st, st);
		mem_attach_pid();
		if (atomic_load(&st->state) != CBN_MEM_ON) {
			atomic_store(&mem_mode, MEM_OFF);
			mem_fast_update();
			return 0;
		}
		cbn_agent_mem_started();
		mem_fast_update();
		return 1;
	}
	if (!mem_ready()) {
		mem_refuse(st, mem_refused[0] ? mem_refused : "the real malloc was not found");
		atomic_store(&mem_mode, MEM_OFF);
		return 0;
	}
	/* glibc's own malloc: its chunk headers are read directly, checked
	 * against malloc_usable_size on the first blocks (mem_usable). */
	if (mem_usable_ok && !(mem_flags & CBN_MEMF_FOREIGN))
		atomic_store(&mem_usable_glibc, 1);
	less = mem_table_full_size() ? 0 : 3;
	if (memtable_init(&mem_table, MEM_TABLE_BITS - less, MEM_FILTER_BITS - less,
			  (void *(*)(void *, size_t, int, int, int, long))mem_real.mmap) < 0) {
		mem_refuse(st, "cannot map the live-block table");
		atomic_store(&mem_mode, MEM_OFF);
		return 0;
	}
	st->rate = mem_rate;
	st->brk_start = (uint64_t)syscall(SYS_brk, 0);
	atomic_store(&st->flags, mem_flags | (mem_rate <= 1 ? CBN_MEMF_EXACT : 0) |
					 (mem_usable_ok ? CBN_MEMF_USABLE : 0));
	/* What was counted before: the heap the session starts with. */
	atomic_store(&st->host_live, atomic_exchange(&early_live, 0));
	atomic_store(&st->allocs, atomic_exchange(&early_allocs, 0));
	atomic_store(&st->frees, atomic_exchange(&early_frees, 0));
	atomic_store(&st->alloc_bytes, atomic_exchange(&early_bytes, 0));
	mem_attach_pid();
	atomic_store_explicit(&mem_st, st, memory_order_release);
	atomic_store(&mem_mode, MEM_RECORDING);
	mem_peak(st, atomic_load(&st->host_live));
	atomic_store(&st->state, CBN_MEM_ON);
	cbn_agent_mem_started();
	mem_fast_update();
	return 1;
}

static void mem_fork_child(void)
{
	mem_tls.tid = 0;
	/* Only this thread is left: its counts carry over (the agent copied
	 * the parent's header counters, which they are not in yet); every
	 * other slot's owner is gone. */
	if (mem_slots) {
		unsigned i;

		for (i = 0; i < MEM_SLOTS; i++)
			if (&mem_slots[i] != mem_tls.c)
				atomic_store(&mem_slots[i].used, 0);
	}
	atomic_store(&mem_collected, 0);
	mem_tls.in_hook++;
	/* The child's file has none of the parent's MEM_ALLOC records: forget
	 * the blocks (the counters carry over, the agent copied them). */
	memtable_clear(&mem_table);
	if (atomic_load(&mem_mode) == MEM_RECORDING)
		mem_start(1);
	mem_tls.in_hook--;
}

static void mem_on_exit(int status, void *arg)
{
	(void)status;
	(void)arg;
	/* Before the agent's own exit handler (registered earlier, runs later)
	 * writes the last MEM_COUNTERS. */
	mem_collect_all();
}

/* _exit and _Exit run no exit handler: the counts of every thread go into
 * the header first (memory only, then the real call). */
MEM_API __attribute__((noreturn)) void _exit(int status)
{
	static void (*real)(int) __attribute__((noreturn));

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "_exit");
	if (atomic_load_explicit(&mem_mode, memory_order_relaxed) == MEM_RECORDING)
		mem_collect_all();
	if (real)
		real(status);
	syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

MEM_API __attribute__((noreturn)) void _Exit(int status)
{
	_exit(status);
}

/* A setting of the run, from the agent (whose constructor ran before ours
 * and took its variables out of the environment: env.c). */
static const char *mem_getenv(const char *name)
{
	const char *(*fn)(const char *) =
		(const char *(*)(const char *))dlsym(RTLD_DEFAULT, "cbn_agent_getenv");

	return fn ? fn(name) : getenv(name);
}

__attribute__((constructor)) static void mem_init(void)
{
	const char *s;
	char *end;
	unsigned long long v;

	mem_tls.in_hook++;
	s = mem_getenv(CBN_ENV_MEMORY_RATE);
	if (s && *s) {
		v = strtoull(s, &end, 10);
		if (!*end && v >= 1)
			mem_rate = v;
	}
	s = mem_getenv(CBN_ENV_DEPTH);
	if (s && *s) {
		v = strtoull(s, &end, 10);
		if (!*end && v >= 1 && v <= CBN_MAX_FRAMES)
			mem_depth = (int)v;
	}
	/* No pthread key (the program keeps all PTHREAD_KEYS_MAX): the agent
	 * tells us when a thread ends, or comes under a seccomp filter. */
	cbn_agent_mem_callbacks(mem_thread_end, mem_sandbox);
	if (mem_start(0)) {
		pthread_atfork(NULL, NULL, mem_fork_child);
		on_exit(mem_on_exit, NULL);
	}
	mem_tls.in_hook--;
}
