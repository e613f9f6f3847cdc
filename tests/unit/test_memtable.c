/*
 * test_memtable.c — the allocation hooks' live table (src/agent/mem/memtable.c):
 * insert/find/remove, tombstones reused, a full probe window, a key that
 * finds no room in the first level found in the next, the counting filter
 * (never a false "absent"), and threads inserting and removing distinct keys
 * at once with nothing lost or duplicated.
 */
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>

#include "testlib.h"
#include "agent/mem/memtable.c"

static void *test_mmap(void *a, size_t l, int p, int f, int fd, long off)
{
	return mmap(a, l, p, f, fd, off);
}

static void test_basic(void)
{
	struct memtable t;
	uint64_t v = 0;

	REQUIRE(memtable_init(&t, 10, 8, test_mmap) == 0);
	CHECK(!memtable_maybe(&t, 0x1000));
	CHECK(memtable_find(&t, 0x1000, &v) == 0);
	CHECK(memtable_insert(&t, 0x1000, 42) == 0);
	CHECK(memtable_insert(&t, 0x2000, 43) == 0);
	CHECK(memtable_maybe(&t, 0x1000));
	CHECK(memtable_find(&t, 0x1000, &v) == 1 && v == 42);
	CHECK(memtable_find(&t, 0x2000, &v) == 1 && v == 43);
	CHECK(atomic_load(&t.live) == 2);
	CHECK(memtable_remove(&t, 0x1000, &v) == 1 && v == 42);
	CHECK(memtable_remove(&t, 0x1000, &v) == 0); /* a second free is not seen twice */
	CHECK(memtable_find(&t, 0x1000, &v) == 0);
	CHECK(memtable_find(&t, 0x2000, &v) == 1 && v == 43);
	CHECK(atomic_load(&t.live) == 1);
	/* Keys the table reserves are refused. */
	CHECK(memtable_insert(&t, 0, 1) < 0);
	CHECK(memtable_insert(&t, 1, 1) < 0);
	CHECK(memtable_insert(&t, 2, 1) < 0);
	munmap(t.slots, t.map_len);
}

/* n keys that hash to one slot of level 0 (mt_hash keeps bits 17+ of
 * (key>>4)*C): 1 when found. */
static int same_slot(const struct memtable *t, uint64_t *keys, int n)
{
	uint64_t k;
	int i = 0;

	for (k = 0x10; i < n && k < (1ull << 40); k += 0x10)
		if ((mt_hash(k) & t->mask) == (mt_hash(0x10) & t->mask))
			keys[i++] = k;
	return i == n;
}

/* Keys that all hash to one slot: the probe window fills, then is full;
 * removing one leaves a tombstone the next insert reuses, and keys past it
 * stay reachable. */
static void test_collisions(void)
{
	struct memtable t;
	uint64_t keys[MEMTABLE_PROBE + 1], v;
	int i;

	REQUIRE(memtable_init(&t, 12, 8, test_mmap) == 0);
	REQUIRE(same_slot(&t, keys, MEMTABLE_PROBE + 1));
	for (i = 0; i < MEMTABLE_PROBE; i++)
		CHECK(memtable_insert(&t, keys[i], (uint64_t)i) == 0);
	CHECK(memtable_insert(&t, keys[MEMTABLE_PROBE], 99) == -ENOSPC);
	CHECK(memtable_find(&t, keys[MEMTABLE_PROBE], &v) == 0);
	/* The filter forgot the refused key's count. */
	CHECK(atomic_load(&t.live) == MEMTABLE_PROBE);
	CHECK(memtable_remove(&t, keys[3], &v) == 1 && v == 3);
	CHECK(memtable_find(&t, keys[MEMTABLE_PROBE - 1], &v) == 1 && v == MEMTABLE_PROBE - 1);
	CHECK(memtable_insert(&t, keys[MEMTABLE_PROBE], 99) == 0); /* the tombstone */
	CHECK(t.slots[(mt_hash(keys[0]) + 3) & t.mask].key == keys[MEMTABLE_PROBE]);
	for (i = 0; i < MEMTABLE_PROBE; i++)
		if (i != 3)
			CHECK(memtable_find(&t, keys[i], &v) == 1 && v == (uint64_t)i);
	memtable_clear(&t);
	CHECK(memtable_find(&t, keys[0], &v) == 0);
	CHECK(!memtable_maybe(&t, keys[0]));
	CHECK(atomic_load(&t.live) == 0);
	munmap(t.slots, t.map_len);
}

/* Levels: 2^14 slots, then 2^16.  A key whose probe window is full in the
 * first level goes to the second, where lookups then look (and only then);
 * the first level's pages are the only ones a small table touches. */
static void test_levels(void)
{
	struct memtable t;
	uint64_t keys[MEMTABLE_PROBE + 1], v;
	int i;

	REQUIRE(memtable_init(&t, 16, 8, test_mmap) == 0);
	CHECK_EQ_INT(t.nlevels, 2);
	CHECK(t.mask == (1u << 14) - 1 && t.lv[1].mask == (1u << 16) - 1);
	CHECK(memtable_bytes(16, 8) == (((size_t)1 << 14) + ((size_t)1 << 16)) *
					       sizeof(struct memtable_slot) + 256 * sizeof(uint32_t));
	CHECK_EQ_INT(atomic_load(&t.used), 1);
	REQUIRE(same_slot(&t, keys, MEMTABLE_PROBE + 1));
	for (i = 0; i < MEMTABLE_PROBE; i++)
		CHECK(memtable_insert(&t, keys[i], (uint64_t)i) == 0);
	CHECK_EQ_INT(atomic_load(&t.used), 1);
	CHECK(memtable_insert(&t, keys[MEMTABLE_PROBE], 99) == 0);
	CHECK_EQ_INT(atomic_load(&t.used), 2);
	CHECK(t.lv[1].slots[mt_hash(keys[MEMTABLE_PROBE]) & t.lv[1].mask].key ==
	      keys[MEMTABLE_PROBE]);
	CHECK(memtable_find(&t, keys[MEMTABLE_PROBE], &v) == 1 && v == 99);
	/* a tombstone in the first level: the key in the second stays found */
	CHECK(memtable_remove(&t, keys[0], &v) == 1 && v == 0);
	CHECK(memtable_remove(&t, keys[MEMTABLE_PROBE], &v) == 1 && v == 99);
	CHECK(memtable_find(&t, keys[MEMTABLE_PROBE], &v) == 0);
	CHECK(atomic_load(&t.live) == MEMTABLE_PROBE - 1);
	memtable_clear(&t);
	CHECK_EQ_INT(atomic_load(&t.used), 1);
	CHECK(memtable_find(&t, keys[1], &v) == 0);
	munmap(t.slots, t.map_len);
}

/* The filter, one counter per 4 KiB page: every key inserted reads
 * "maybe", and so does any other address in its page; addresses in other
 * pages read "absent" unless their page is 2^fbits pages from one (a
 * 2^12-counter filter with 100 keys). */
static void test_filter(void)
{
	struct memtable t;
	uint64_t k, v;
	int absent = 0, i;

	REQUIRE(memtable_init(&t, 12, 12, test_mmap) == 0);
	for (i = 0; i < 100; i++)
		CHECK(memtable_insert(&t, 0x7f0000000000ull + (uint64_t)i * 8192 + 64, 1) == 0);
	for (i = 0; i < 100; i++) {
		CHECK(memtable_maybe(&t, 0x7f0000000000ull + (uint64_t)i * 8192 + 64));
		CHECK(memtable_maybe(&t, 0x7f0000000000ull + (uint64_t)i * 8192 + 4000));
	}
	/* the pages in between, and 4096 pages of another region */
	for (i = 0; i < 100; i++)
		absent += !memtable_maybe(&t, 0x7f0000000000ull + (uint64_t)i * 8192 + 4096 + 48);
	CHECK_EQ_INT(absent, 100);
	absent = 0;
	for (i = 0; i < 4096; i++) {
		k = 0x5500000000ull + (uint64_t)i * 4096 + 48;
		absent += !memtable_maybe(&t, k);
	}
	/* 100 of 4096 counters set: the other 3996 pages read absent. */
	CHECK_EQ_INT(absent, 4096 - 100);
	for (i = 0; i < 100; i++)
		CHECK(memtable_remove(&t, 0x7f0000000000ull + (uint64_t)i * 8192 + 64, &v) == 1);
	for (i = 0; i < 100; i++)
		CHECK(!memtable_maybe(&t, 0x7f0000000000ull + (uint64_t)i * 8192 + 64));
	munmap(t.slots, t.map_len);
}

#define THREADS 4
#define PER_THREAD 20000

static struct memtable shared;
static _Atomic int errors;

static void *worker(void *arg)
{
	uint64_t base = 0x100000000ull * (1 + (uintptr_t)arg), v;
	int round, i;

	for (round = 0; round < 5; round++) {
		for (i = 0; i < PER_THREAD; i++)
			if (memtable_insert(&shared, base + (uint64_t)i * 32, base + (uint64_t)i) < 0)
				atomic_fetch_add(&errors, 1);
		for (i = 0; i < PER_THREAD; i++)
			if (memtable_remove(&shared, base + (uint64_t)i * 32, &v) != 1 ||
			    v != base + (uint64_t)i)
				atomic_fetch_add(&errors, 1);
	}
	/* Leave the odd ones in. */
	for (i = 1; i < PER_THREAD; i += 2)
		if (memtable_insert(&shared, base + (uint64_t)i * 32, (uint64_t)i) < 0)
			atomic_fetch_add(&errors, 1);
	return NULL;
}

static void test_threads(void)
{
	pthread_t th[THREADS];
	uint64_t v;
	uintptr_t i;
	int j, missing = 0;

	REQUIRE(memtable_init(&shared, 18, 12, test_mmap) == 0);
	for (i = 0; i < THREADS; i++)
		REQUIRE(pthread_create(&th[i], NULL, worker, (void *)i) == 0);
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ_INT(atomic_load(&errors), 0);
	CHECK_EQ_INT(atomic_load(&shared.live), THREADS * PER_THREAD / 2);
	for (i = 0; i < THREADS; i++) {
		uint64_t base = 0x100000000ull * (1 + i);

		for (j = 0; j < PER_THREAD; j++) {
			int found = memtable_find(&shared, base + (uint64_t)j * 32, &v);
			if (found != (j & 1))
				missing++;
		}
	}
	CHECK_EQ_INT(missing, 0);
	munmap(shared.slots, shared.map_len);
}

int main(void)
{
	test_basic();
	test_collisions();
	test_levels();
	test_filter();
	test_threads();
	return test_result();
}
