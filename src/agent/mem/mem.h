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
int mem_ready(void) MEM_HIDDEN;

/* The usable size of a block of the real allocator (only when header.mem
 * has CBN_MEMF_USABLE). */
size_t mem_usable(void *p) MEM_HIDDEN;

/* Bootstrap arena (while dlsym resolves): bump allocation with a size header. */
void *mem_arena_alloc(size_t size, size_t align) MEM_HIDDEN;
int mem_arena_owns(const void *p) MEM_HIDDEN;
size_t mem_arena_size(const void *p) MEM_HIDDEN;

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
