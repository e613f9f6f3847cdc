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

/* The levels' sizes for a table of 2^bits slots: 2^14, 2^17, then 2^bits,
 * those smaller than 2^bits only. */
static int mt_levels(unsigned bits, unsigned lb[MEMTABLE_LEVELS])
{
	static const unsigned small[MEMTABLE_LEVELS - 1] = {14, 17};
	int n = 0, i;

	for (i = 0; i < MEMTABLE_LEVELS - 1 && bits > small[i]; i++)
		lb[n++] = small[i];
	lb[n++] = bits;
	return n;
}

size_t memtable_bytes(unsigned bits, unsigned fbits)
{
	unsigned lb[MEMTABLE_LEVELS];
	size_t len = ((size_t)1 << fbits) * sizeof(uint32_t);
	int i, n = mt_levels(bits, lb);

	for (i = 0; i < n; i++)
		len += ((size_t)1 << lb[i]) * sizeof(struct memtable_slot);
	return len;
}

int memtable_init(struct memtable *t, unsigned bits, unsigned fbits,
		  void *(*mmap_fn)(void *, size_t, int, int, int, long))
{
	unsigned lb[MEMTABLE_LEVELS];
	size_t len, off = 0;
	void *p;
	int i;

	memset(t, 0, sizeof(*t));
	if (bits > 40 || fbits > 24)
		return -ENOMEM;
	len = memtable_bytes(bits, fbits);
	p = mmap_fn(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	t->nlevels = mt_levels(bits, lb);
	for (i = 0; i < t->nlevels; i++) {
		t->lv[i].slots = (struct memtable_slot *)((char *)p + off);
		t->lv[i].mask = ((uint64_t)1 << lb[i]) - 1;
		off += ((size_t)1 << lb[i]) * sizeof(struct memtable_slot);
	}
	t->map_len = len;
	t->mask = t->lv[0].mask;
	t->fmask = ((uint64_t)1 << fbits) - 1;
	t->filter = (_Atomic uint32_t *)((char *)p + off);
	atomic_store(&t->used, 1);
	t->slots = p;
	return 0;
}

/* Make level l one a lookup searches, before a key may be put there. */
static void mt_use(struct memtable *t, int l)
{
	int u = atomic_load_explicit(&t->used, memory_order_relaxed);

	while (u < l + 1 &&
	       !atomic_compare_exchange_weak_explicit(&t->used, &u, l + 1, memory_order_release,
						      memory_order_relaxed))
		;
}

int memtable_insert(struct memtable *t, uint64_t key, uint64_t val)
{
	uint64_t h;
	int l, n;

	if (!t->slots || key <= MT_BUSY)
		return -EINVAL;
	h = mt_hash(key);
	atomic_fetch_add_explicit(&t->filter[mt_fhash(key) & t->fmask], 1, memory_order_acq_rel);
	for (l = 0; l < t->nlevels; l++) {
		const struct memtable_level *lv = &t->lv[l];

		if (l > 0)
			mt_use(t, l);
		for (n = 0; n < MEMTABLE_PROBE; n++) {
			struct memtable_slot *s = &lv->slots[(h + (uint64_t)n) & lv->mask];
			uint64_t k = atomic_load_explicit(&s->key, memory_order_relaxed);

			if (k != MT_EMPTY && k != MT_TOMB)
				continue;
			/* Claim the slot (BUSY: finders probe on past it), then the
			 * value, then the key with release: a finder that sees the
			 * key sees the value. */
			if (!atomic_compare_exchange_strong_explicit(&s->key, &k, MT_BUSY,
								     memory_order_acquire,
								     memory_order_relaxed))
				continue;
			atomic_store_explicit(&s->val, val, memory_order_relaxed);
			atomic_store_explicit(&s->key, key, memory_order_release);
			atomic_fetch_add_explicit(&t->live, 1, memory_order_relaxed);
			return 0;
		}
	}
	atomic_fetch_sub_explicit(&t->filter[mt_fhash(key) & t->fmask], 1, memory_order_acq_rel);
	return -ENOSPC;
}

/* The slot holding key, or NULL: level by level, each searched up to its
 * first empty slot. */
static struct memtable_slot *mt_lookup(const struct memtable *t, uint64_t key)
{
	int used = atomic_load_explicit(&t->used, memory_order_acquire), l, n;
	uint64_t h = mt_hash(key);

	for (l = 0; l < used && l < t->nlevels; l++) {
		const struct memtable_level *lv = &t->lv[l];

		for (n = 0; n < MEMTABLE_PROBE; n++) {
			struct memtable_slot *s = &lv->slots[(h + (uint64_t)n) & lv->mask];
			uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);

			if (k == key)
				return s;
			if (k == MT_EMPTY)
				break;
		}
	}
	return NULL;
}

int memtable_find(const struct memtable *t, uint64_t key, uint64_t *val)
{
	const struct memtable_slot *s;

	if (!t->slots || key <= MT_BUSY || !(s = mt_lookup(t, key)))
		return 0;
	*val = atomic_load_explicit(&s->val, memory_order_relaxed);
	return 1;
}

int memtable_remove(struct memtable *t, uint64_t key, uint64_t *val)
{
	struct memtable_slot *s;
	uint64_t k = key, v;

	if (!t->slots || key <= MT_BUSY || !(s = mt_lookup(t, key)))
		return 0;
	v = atomic_load_explicit(&s->val, memory_order_relaxed);
	if (!atomic_compare_exchange_strong_explicit(&s->key, &k, MT_TOMB, memory_order_acq_rel,
						     memory_order_relaxed))
		return 0; /* another thread freed it (a double free) */
	atomic_fetch_sub_explicit(&t->filter[mt_fhash(key) & t->fmask], 1, memory_order_acq_rel);
	atomic_fetch_sub_explicit(&t->live, 1, memory_order_relaxed);
	*val = v;
	return 1;
}

void memtable_clear(struct memtable *t)
{
	if (!t->slots)
		return;
	/* A private anonymous mapping reads back as zeros after DONTNEED. */
	madvise(t->slots, t->map_len, MADV_DONTNEED);
	atomic_store(&t->used, 1);
	atomic_store(&t->live, 0);
}
