/*
 * memtable.h — the allocation hooks' table of live blocks: sampled heap blocks
 * and every anonymous mapping, keyed by address, so that a free or munmap
 * knows the block's size and whether it had a record.  Lock-free open
 * addressing in one MAP_NORESERVE mapping made once, with a counting filter
 * indexed by a second hash: the free of a block that is not in the table
 * (nearly every free when sampling) costs one load.
 *
 * The slots are in levels of growing size (2^14, 2^17, then the rest): a key
 * goes to the first level with room in its probe window, and a lookup looks
 * no deeper than the deepest level ever used.  A table of one level that
 * size alone made every insert touch a page at random among thousands (the
 * few tens of blocks a sampling run keeps live wandered over all of them, a
 * page fault each: some 20 us in a VM, and 32 MiB resident in the end); the
 * first level is 256 KiB.
 *
 * Every function is LOCK-FREE and allocation-free, usable from any thread
 * (and from a signal handler).  A key is inserted by the thread that got the
 * block from the allocator and removed before the block goes back to it, so
 * a key is never in the table twice.
 */
#ifndef CBN_MEMTABLE_H
#define CBN_MEMTABLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define MEMTABLE_PROBE 64            /* longest probe sequence, per level */
#define MEMTABLE_LEVELS 3

struct memtable_slot {
	_Atomic uint64_t key;            /* 0 empty, 1 tombstone, 2 being filled, else the address */
	_Atomic uint64_t val;
};

struct memtable_level {
	struct memtable_slot *slots;
	uint64_t mask;
};

struct memtable {
	struct memtable_slot *slots;     /* level 0, the mapping's start; NULL: not made
					    (every call is a no-op) */
	uint64_t mask;                   /* level 0's */
	struct memtable_level lv[MEMTABLE_LEVELS];
	int nlevels;
	_Atomic int used;                /* levels a key may be in: 1 + the deepest used */
	_Atomic uint32_t *filter;        /* counts of live keys per second hash */
	uint64_t fmask;
	size_t map_len;
	_Atomic uint64_t live;           /* keys in the table */
};

/* Map a table of about 2^bits slots (its last level has 2^bits; up to two
 * smaller ones come first) and a filter of 2^fbits counters (all
 * MAP_NORESERVE: only touched pages cost memory).  mmap_fn is the real mmap
 * (the hooks' own would record this mapping).  Returns 0 or -ENOMEM. */
int memtable_init(struct memtable *t, unsigned bits, unsigned fbits,
		  void *(*mmap_fn)(void *, size_t, int, int, int, long));

/* Bytes the table maps (its bound on the agent's memory). */
size_t memtable_bytes(unsigned bits, unsigned fbits);

/* 0, or -ENOSPC when MEMTABLE_PROBE slots from its hash are all taken in
 * every level. */
int memtable_insert(struct memtable *t, uint64_t key, uint64_t val);

/*
 * The filter's index of a key: its page (4 KiB), so that the filter's part a
 * program's frees read is a 256th of its heap's size (4 bytes a page): a
 * 10 MiB heap's frees read 10 KiB of it, where a counter per 16 bytes had
 * them read all 256 KiB, at random, beside the heap (a scattering hash made
 * every free a cache miss).  The price: a free in a page that holds a
 * table key (a sampled block, one in 128 pages at the default rate) looks
 * in the table for nothing; so do keys 2^fbits pages apart.
 */
static inline uint64_t memtable_fhash(uint64_t key)
{
	return key >> 12;
}

/* 0 when key is certainly not in the table: one load. */
static inline int memtable_maybe(const struct memtable *t, uint64_t key)
{
	return t->filter && atomic_load_explicit(&t->filter[memtable_fhash(key) & t->fmask],
						 memory_order_acquire) != 0;
}

/* Take key out; 1 with its value in *val, or 0 when absent. */
int memtable_remove(struct memtable *t, uint64_t key, uint64_t *val);

/* 1 with key's value in *val, or 0. */
int memtable_find(const struct memtable *t, uint64_t key, uint64_t *val);

/* Forget every key (a fork child: its blocks' records are in the parent's
 * file).  Only while no other thread uses the table. */
void memtable_clear(struct memtable *t);

#endif
