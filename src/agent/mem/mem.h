/*
 * mem.h — internals of the allocation hooks (libcbottleneck_mem.so): the real
 * allocator's functions, the per-thread guard and sampling state, and the two
 * accounting entry points every hook calls.  Internal only.
 *
 * Every function here runs inside the program's allocation calls: none takes
 * a lock, allocates (other than through the real allocator) or recurses into
 * the hooks; nested calls (our own, or a program signal handler that mallocs
 * while a hook runs) see mem_tls.in_hook set and go straight to the real
 * function.
 */
#ifndef CBN_MEM_H
#define CBN_MEM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cbn_format.h"
#include "memtable.h"

#define MEM_TLS __attribute__((tls_model("initial-exec")))
#define MEM_HIDDEN __attribute__((visibility("hidden")))
#define MEM_API __attribute__((visibility("default")))

/* The functions the hooks stand in front of (dlsym(RTLD_NEXT, ...)). */
struct mem_real {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void (*free)(void *);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	size_t (*usable)(void *);        /* NULL unless from the same object as malloc */
	size_t (*usable_next)(void *);   /* the next malloc_usable_size, whoever's */
	void *(*mmap)(void *, size_t, int, int, int, off_t);
	int (*munmap)(void *, size_t);
	void *(*mremap)(void *, size_t, size_t, int, ...);
	void *(*sbrk)(intptr_t);
	int (*brk)(void *);
};

extern struct mem_real mem_real MEM_HIDDEN;
extern struct memtable mem_table MEM_HIDDEN;

/* What real.c found: the real malloc_usable_size may be called (it is the
 * real malloc's own), CBN_MEMF_FOREIGN and CBN_MEMF_REPLACED, and why there
 * is no real malloc when there is none. */
extern int mem_usable_ok MEM_HIDDEN;
extern uint32_t mem_flags MEM_HIDDEN;
extern char mem_refused[124] MEM_HIDDEN;

/* 0 before resolution, 1 while resolving (allocations from the bootstrap
 * arena), 2 resolved. */
extern _Atomic int mem_resolved MEM_HIDDEN;

/*
 * A thread's counts not yet in header.mem.  They live in a slot of a shared
 * array (mem.c), not in TLS, so that an exit of the process however it
 * happens (exit, _exit, the raw exit_group) can add every thread's to the
 * header; only the owner thread writes its slot.
 */
struct mem_counts {
	uint64_t allocs, frees, bytes;
	int64_t delta;                   /* live bytes not yet in header.mem.host_live */
	_Atomic uint32_t used;           /* slot taken by a thread */
	uint32_t pad[7];                 /* one cache line per slot */
};

/* Per thread, initial-exec TLS (no __tls_get_addr, which may malloc). */
struct mem_thread {
	int in_hook;                     /* nested calls pass straight through */
	int seeded;
	uint32_t tid;
	int64_t left;                    /* bytes until the next sampled allocation */
	uint64_t rng;
	struct mem_counts *c;            /* its slot, or &own when none is free */
	struct mem_counts own;
};

extern __thread struct mem_thread mem_tls MEM_TLS MEM_HIDDEN;

/* hooks.c's malloc itself (not the one that wins the symbol lookup). */
extern void *mem_malloc_self(size_t size) MEM_HIDDEN;

/* Resolve the real functions if not done: 1 when mem_real is usable, 0 when
 * the caller must use the bootstrap arena. */
int mem_ready_slow(void) MEM_HIDDEN;

static inline __attribute__((always_inline)) int mem_ready(void)
{
	if (__builtin_expect(atomic_load_explicit(&mem_resolved, memory_order_acquire) == 2, 1))
		return 1;
	return mem_ready_slow();
}

/* The file name (no directory) of the object that defines address f, or
 * NULL.  Not for the hot path (dladdr). */
const char *mem_object_name(const void *f) MEM_HIDDEN;

/* The usable size of a block of the real allocator (only when header.mem
 * has CBN_MEMF_USABLE). */
size_t mem_usable(void *p) MEM_HIDDEN;

/* Bootstrap arena (while dlsym resolves): bump allocation with a size header. */
#define MEM_ARENA_SIZE (256u * 1024u)
extern char mem_arena[MEM_ARENA_SIZE] MEM_HIDDEN;
void *mem_arena_alloc(size_t size, size_t align) MEM_HIDDEN;
size_t mem_arena_size(const void *p) MEM_HIDDEN;

static inline __attribute__((always_inline)) int mem_arena_owns(const void *p)
{
	return (uintptr_t)p - (uintptr_t)mem_arena < MEM_ARENA_SIZE;
}

/*
 * After the real allocator returned block p (size bytes asked for): count
 * it, draw whether it is sampled, record it (stack, table).  Anonymous
 * mappings (kind CBN_ALLOC_MMAP) always go in the table.  Called directly
 * by each hook with in_hook set (the record's stack skips a fixed number of
 * frames: the hook, this function and the one it calls).
 */
void mem_alloc_done(void *p, size_t size, int kind, int fn) MEM_HIDDEN;

/* Before block p goes back to the real allocator: count it and, if it is in
 * the table, take it out and write its MEM_FREE.  Returns the value it had
 * in the table (0 when it was not there), for a caller that must put it back
 * when the release fails (realloc, munmap, mremap). */
uint64_t mem_free_begin(void *p, int fn) MEM_HIDDEN;

/* The release that mem_free_begin announced failed: block p is live again. */
void mem_free_undo(void *p, uint64_t val, int fn) MEM_HIDDEN;

/* munmap/mremap of [p, p+len): the part of a table entry that stays mapped
 * goes back in the table. */
void mem_unmap_done(void *p, size_t len, uint64_t val) MEM_HIDDEN;

/* --- the fast path ------------------------------------------------------------
 *
 * What nearly every call of a sampling run does, inlined into each hook: the
 * block's usable size from glibc's chunk header (the word before the block,
 * which glibc's own free reads next), the thread's counts, the byte countdown
 * to the next sample point.  No call, no system call, no atomic
 * read-modify-write, no store outside the thread's own counts.  Whatever else
 * is due (a sample point, a flush of the counts, a block in the live table,
 * an mmapped chunk, the first blocks whose header is checked against
 * malloc_usable_size, another allocator, exact mode) is left to
 * mem_alloc_done and mem_free_begin, which count the call themselves: the
 * fast path does all or nothing.
 */

/* Counts are flushed at least this often (allocation calls per thread). */
#define MEM_FLUSH_CALLS 4096

/* 1 while the fast path may run: recording at a sampling rate (not exact),
 * with glibc's malloc, its chunk headers read and checked (mem.c). */
extern _Atomic int mem_fast MEM_HIDDEN;

/* glibc's chunk header of block p when the fast path may count it (not an
 * mmapped chunk), else 0. */
static inline __attribute__((always_inline)) size_t mem_fast_head(const void *p)
{
	size_t head = ((const size_t *)p)[-1];

	return (head & 2) ? 0 : head;
}

/* The counts after adding d bytes stay below every flush threshold. */
static inline __attribute__((always_inline)) int mem_fast_keeps(const struct mem_counts *c,
								 int64_t d)
{
	return d < (int64_t)CBN_MEM_FLUSH && d > -(int64_t)CBN_MEM_FLUSH &&
	       c->allocs + c->frees + 1 < MEM_FLUSH_CALLS;
}

/* After the real allocator returned heap block p of size bytes: 1 when it is
 * counted and holds no sample point, 0 when mem_alloc_done must see it.
 * Called with in_hook set (a signal handler's malloc passes through). */
static inline __attribute__((always_inline)) int mem_alloc_fast(void *p, size_t size)
{
	struct mem_thread *t = &mem_tls;
	struct mem_counts *c = t->c;
	size_t head;
	int64_t u;

	if (!atomic_load_explicit(&mem_fast, memory_order_relaxed) || !c || !p ||
	    (int64_t)size < 0 || (int64_t)size >= t->left)
		return 0;
	head = mem_fast_head(p);
	u = (int64_t)(head & ~(size_t)7) - 8;
	if (!head || !mem_fast_keeps(c, c->delta + u))
		return 0;
	t->left -= (int64_t)size;
	c->allocs++;
	c->bytes += (uint64_t)u;
	c->delta += u;
	return 1;
}

/* Before heap block p goes back to the real allocator: 1 when it is counted
 * and certainly not in the live table, 0 when mem_free_begin must see it. */
static inline __attribute__((always_inline)) int mem_free_fast(void *p)
{
	struct mem_counts *c = mem_tls.c;
	size_t head;
	int64_t u;

	if (!atomic_load_explicit(&mem_fast, memory_order_relaxed) || !c)
		return 0;
	head = mem_fast_head(p);
	u = (int64_t)(head & ~(size_t)7) - 8;
	if (!head || memtable_maybe(&mem_table, (uint64_t)(uintptr_t)p) ||
	    !mem_fast_keeps(c, c->delta - u))
		return 0;
	c->frees++;
	c->delta -= u;
	return 1;
}

/* A table entry's kind for a PROT_NONE mapping (a reservation): never a
 * record kind, so 0, which no cbn_alloc_kind is. */
#define MEM_KIND_RESERVE 0

/* An anonymous PROT_NONE mapping of size bytes at p: reserved address space,
 * counted apart from live memory (header.mem_reserved_*). */
void mem_reserve_done(void *p, size_t size) MEM_HIDDEN;

/* The table value of an entry: size, kind, sampled. */
static inline uint64_t mem_val(uint64_t size, int kind, int sampled)
{
	return size << 3 | (uint64_t)(kind & 3) | (sampled ? 4u : 0u);
}
static inline uint64_t mem_val_size(uint64_t v) { return v >> 3; }
static inline int mem_val_kind(uint64_t v) { return (int)(v & 3); }
static inline int mem_val_sampled(uint64_t v) { return (v & 4) != 0; }

#endif
