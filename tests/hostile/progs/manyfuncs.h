/*
 * manyfuncs.h — burn_many(): burn CPU through 1024 distinct functions that
 * call each other in a pseudo-random order, so a sampler's unwinder keeps
 * meeting return addresses it has not cached (libunwind's register-state
 * cache holds 128) and has to look frames up again (dl_iterate_phdr).
 */
#ifndef MANYFUNCS_H
#define MANYFUNCS_H

#include "hostile.h"

typedef uint64_t (*mf_fn)(int, uint64_t);
static const mf_fn mf_table[1024];
/* Called at the bottom of every chain when set (before any thread starts). */
static uint64_t (*mf_leaf)(uint64_t);

static inline uint64_t mf_work(uint64_t x)
{
	volatile uint64_t v = x | 1;

	for (int i = 0; i < 300; i++)
		v = v * 6364136223846793005ull + 1442695040888963407ull;
	return v;
}

/* The "+ 1" after the call keeps the caller's frame on the stack. */
#define MF1(n)                                                                                     \
	static HOSTILE_FN uint64_t mf_##n(int d, uint64_t x)                                       \
	{                                                                                          \
		x = mf_work(x);                                                                    \
		if (d > 0)                                                                         \
			x = mf_table[(x >> 17) & 1023](d - 1, x) + 1;                              \
		else if (mf_leaf)                                                                  \
			x = mf_leaf(x);                                                            \
		return x;                                                                          \
	}
#define MF4(p) MF1(p##0) MF1(p##1) MF1(p##2) MF1(p##3)
#define MF16(p) MF4(p##0) MF4(p##1) MF4(p##2) MF4(p##3)
#define MF64(p) MF16(p##0) MF16(p##1) MF16(p##2) MF16(p##3)
#define MF256(p) MF64(p##0) MF64(p##1) MF64(p##2) MF64(p##3)
MF256(0)
MF256(1)
MF256(2)
MF256(3)

#define MT1(n) mf_##n,
#define MT4(p) MT1(p##0) MT1(p##1) MT1(p##2) MT1(p##3)
#define MT16(p) MT4(p##0) MT4(p##1) MT4(p##2) MT4(p##3)
#define MT64(p) MT16(p##0) MT16(p##1) MT16(p##2) MT16(p##3)
#define MT256(p) MT64(p##0) MT64(p##1) MT64(p##2) MT64(p##3)
static const mf_fn mf_table[1024] = {MT256(0) MT256(1) MT256(2) MT256(3)};

/* Burn `seconds` of this thread's CPU through call chains 8 deep. */
static HOSTILE_FN uint64_t burn_many(double seconds)
{
	double end = thread_cpu() + seconds;
	uint64_t x = 12345;

	while (thread_cpu() < end)
		for (int i = 0; i < 16; i++)
			x = mf_table[(x >> 23) & 1023](8, x);
	return x;
}

#endif
