/*
 * memtable.c — the lock-free table of live blocks (memtable.h): linear
 * probing over (key, value) slots with tombstones that insertions reuse, and
 * a counting filter.  Insert bumps the filter before it publishes the key and
 * remove drops it after the tombstone, so a zero filter count is never wrong.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "memtable.h"

#define MT_EMPTY 0ull
#define MT_TOMB 1ull
#define MT_BUSY 2ull                   /* being claimed by an inserter */

static uint64_t mt_hash(uint64_t key)
{
	/* Blocks are 16-byte aligned: the low bits carry nothing. */
	return ((key >> 4) * 0x9e3779b97f4a7c15ull) >> 17;
}

static uint64_t mt_fhash(uint64_t key)
{
	return memtable_fhash(key);
}

size_t memtable_bytes(unsigned bits, unsigned fbits)
{
	return ((size_t)1 << bits) * sizeof(struct memtable_slot) +
	       ((size_t)1 << fbits) * sizeof(uint32_t);
}

int memtable_init(struct memtable *t, unsigned bits, unsigned fbits,
		  void *(*mmap_fn)(void *, size_t, int, int, int, long))
{
	size_t len = memtable_bytes(bits, fbits);
	void *p;

	memset(t, 0, sizeof(*t));
	if (bits > 40 || fbits > 24)
		return -ENOMEM;
	p = mmap_fn(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	t->map_len = len;
	t->mask = ((uint64_t)1 << bits) - 1;
	t->fmask = ((uint64_t)1 << fbits) - 1;
	t->filter = (_Atomic uint32_t *)((char *)p + ((size_t)1 << bits) *
						      sizeof(struct memtable_slot));
	t->slots = p;
	return 0;
}

int memtable_insert(struct memtable *t, uint64_t key, uint64_t val)
{
	uint64_t h;
	int n;

	if (!t->slots || key <= MT_BUSY)
		return -EINVAL;
	h = mt_hash(key);
	atomic_fetch_add_explicit(&t->filter[mt_fhash(key) & t->fmask], 1, memory_order_acq_rel);
	for (n = 0; n < MEMTABLE_PROBE; n++) {
		struct memtable_slot *s = &t->slots[(h + (uint64_t)n) & t->mask];
		uint64_t k = atomic_load_explicit(&s->key, memory_order_relaxed);

		if (k != MT_EMPTY && k != MT_TOMB)
			continue;
		/* Claim the slot (BUSY: finders probe on past it), then the value,
		 * then the key with release: a finder that sees the key sees the
		 * value. */
		if (!atomic_compare_exchange_strong_explicit(&s->key, &k, MT_BUSY,
							     memory_order_acquire,
							     memory_order_relaxed))
			continue;
		atomic_store_explicit(&s->val, val, memory_order_relaxed);
		atomic_store_explicit(&s->key, key, memory_order_release);
		atomic_fetch_add_explicit(&t->live, 1, memory_order_relaxed);
		return 0;
	}
	atomic_fetch_sub_explicit(&t->filter[mt_fhash(key) & t->fmask], 1, memory_order_acq_rel);
	return -ENOSPC;
}

int memtable_find(const struct memtable *t, uint64_t key, uint64_t *val)
{
	uint64_t h;
	int n;

	if (!t->slots || key <= MT_BUSY)
		return 0;
	h = mt_hash(key);
	for (n = 0; n < MEMTABLE_PROBE; n++) {
		const struct memtable_slot *s = &t->slots[(h + (uint64_t)n) & t->mask];
		uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);

		if (k == key) {
			*val = atomic_load_explicit(&s->val, memory_order_relaxed);
			return 1;
		}
		if (k == MT_EMPTY)
			return 0;
	}
	return 0;
}

int memtable_remove(struct memtable *t, uint64_t key, uint64_t *val)
{
	uint64_t h;
	int n;

	if (!t->slots || key <= MT_BUSY)
		return 0;
	h = mt_hash(key);
	for (n = 0; n < MEMTABLE_PROBE; n++) {
		struct memtable_slot *s = &t->slots[(h + (uint64_t)n) & t->mask];
		uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);

		if (k == key) {
			uint64_t v = atomic_load_explicit(&s->val, memory_order_relaxed);

			if (!atomic_compare_exchange_strong_explicit(&s->key, &k, MT_TOMB,
								     memory_order_acq_rel,
								     memory_order_relaxed))
				return 0; /* another thread freed it (a double free) */
			atomic_fetch_sub_explicit(&t->filter[mt_fhash(key) & t->fmask], 1,
						  memory_order_acq_rel);
			atomic_fetch_sub_explicit(&t->live, 1, memory_order_relaxed);
			*val = v;
			return 1;
		}
		if (k == MT_EMPTY)
			return 0;
	}
	return 0;
}

void memtable_clear(struct memtable *t)
{
	if (!t->slots)
		return;
	/* A private anonymous mapping reads back as zeros after DONTNEED. */
	madvise(t->slots, t->map_len, MADV_DONTNEED);
	atomic_store(&t->live, 0);
}
