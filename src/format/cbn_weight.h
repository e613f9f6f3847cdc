/*
 * cbn_weight.h — what one sampled allocation stands for: the one formula of
 * the Poisson byte sampling (cbn_format.h, struct cbn_rec_mem_alloc), shared
 * by the agent's live counters (agent/mem/mem.c), the memory analysis and
 * the writers.  Header-only and pure (no state, no allocation).
 */
#ifndef CBN_WEIGHT_H
#define CBN_WEIGHT_H

#include <math.h>
#include <stdint.h>

/* The probability that an allocation of size bytes was sampled under a
 * Poisson process of mean interval rate bytes (tcmalloc, jemalloc, Go):
 * 1 - exp(-size/rate); 1 when every allocation is recorded (rate <= 1) or
 * the block is empty. */
static inline double cbn_mem_sampled_p(uint64_t size, uint64_t rate)
{
	double p;

	if (rate <= 1 || size == 0)
		return 1.0;
	p = -expm1(-(double)size / (double)rate);
	return p > 0 ? p : 1.0;
}

/* The bytes one sampled block of size bytes stands for. */
static inline double cbn_mem_weight_bytes(uint64_t size, uint64_t rate)
{
	return (double)size / cbn_mem_sampled_p(size, rate);
}

/* The allocations one sampled block of size bytes stands for. */
static inline double cbn_mem_weight_allocs(uint64_t size, uint64_t rate)
{
	return 1.0 / cbn_mem_sampled_p(size, rate);
}

#endif
