/*
 * jittab.c — the table of executable ranges outside the modules (jittab.h).
 * A slot is taken by a CAS of its start from 0 to JIT_BUSY, filled, then
 * published by storing the start; a scan reads the slots below jit_used.
 * A reader takes start, len, start again, and keeps the pair only when both
 * starts agree: a slot dropped and taken again between its two loads would
 * otherwise pair the old range's start with the new one's length.
 * [jit_lo, jit_hi) holds every range ever remembered, so that the pcs of
 * no region are answered without a scan.
 */
#include <stdatomic.h>
#include <stdint.h>

#include "jittab.h"

#define JIT_SLOTS 1024
#define JIT_BUSY 1ull
#define JIT_FILE (1ull << 63)            /* in len: a file's range */

struct jit_slot {
	_Atomic uint64_t start;          /* 0: free; JIT_BUSY while being filled */
	_Atomic uint64_t len;            /* | JIT_FILE for a file's range */
};

static struct jit_slot jit_tab[JIT_SLOTS];
static _Atomic int jit_used;
static _Atomic uint64_t jit_lo = UINT64_MAX, jit_hi;

static void jittab_widen(uint64_t start, uint64_t end)
{
	uint64_t lo = atomic_load_explicit(&jit_lo, memory_order_relaxed);
	uint64_t hi = atomic_load_explicit(&jit_hi, memory_order_relaxed);

	while (start < lo && !atomic_compare_exchange_weak(&jit_lo, &lo, start))
		;
	while (end > hi && !atomic_compare_exchange_weak(&jit_hi, &hi, end))
		;
}

void jittab_remember(uint64_t start, uint64_t len, int file)
{
	int i, used = atomic_load_explicit(&jit_used, memory_order_acquire);

	for (i = 0; i < JIT_SLOTS; i++) {
		uint64_t none = 0;

		if (!atomic_compare_exchange_strong(&jit_tab[i].start, &none, JIT_BUSY))
			continue;
		atomic_store_explicit(&jit_tab[i].len, len | (file ? JIT_FILE : 0),
				      memory_order_release);
		jittab_widen(start, start + len);
		atomic_store_explicit(&jit_tab[i].start, start, memory_order_release);
		while (i >= used && !atomic_compare_exchange_weak(&jit_used, &used, i + 1))
			;
		return;
	}
}

/* Slot i's start and len (with JIT_FILE) as one pair: 0 when the slot is
 * free, being filled, or was taken again while it was read.  len's acquire
 * orders the second load of start after it: a len stored by a later taker
 * comes with start at JIT_BUSY or past it. */
static int slot_read(int i, uint64_t *start, uint64_t *len)
{
	uint64_t s = atomic_load_explicit(&jit_tab[i].start, memory_order_acquire);

	if (s <= JIT_BUSY)
		return 0;
	*len = atomic_load_explicit(&jit_tab[i].len, memory_order_acquire);
	*start = s;
	return atomic_load_explicit(&jit_tab[i].start, memory_order_relaxed) == s;
}

int jittab_holds(uint64_t pc)
{
	int i, used = atomic_load_explicit(&jit_used, memory_order_acquire);
	uint64_t s, l;

	if (pc < atomic_load_explicit(&jit_lo, memory_order_relaxed) ||
	    pc >= atomic_load_explicit(&jit_hi, memory_order_relaxed))
		return 0;
	for (i = 0; i < used; i++)
		if (slot_read(i, &s, &l) && pc >= s && pc - s < (l & ~JIT_FILE))
			return 1;
	return 0;
}

int jittab_used(void)
{
	return atomic_load_explicit(&jit_used, memory_order_acquire);
}

int jittab_slot(int i, uint64_t *start, uint64_t *len, int *file)
{
	uint64_t s, l;

	if (!slot_read(i, &s, &l))
		return 0;
	*start = s;
	*len = l & ~JIT_FILE;
	*file = (l & JIT_FILE) != 0;
	return 1;
}

void jittab_drop(int i, uint64_t start)
{
	atomic_compare_exchange_strong(&jit_tab[i].start, &start, 0);
}
