/*
 * inlined — code the compiler inlines: step() calls mix_hot() and mix_cold(),
 * both always inlined into it, mix_hot doing 3 times the work of mix_cold.
 * With --inline expand the report shows mix_hot and mix_cold as rows of their
 * own (about 3:1), marked [inlined in step]; with --inline fold their time is
 * step's own, as perf counts it.  Usage: inlined [SCALE]  (SCALE ≈ CPU seconds)
 */
#include <stdio.h>

#include "burn.h"

static inline __attribute__((always_inline)) uint64_t mix_hot(uint64_t x)
{
	for (int i = 0; i < 3000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static inline __attribute__((always_inline)) uint64_t mix_cold(uint64_t x)
{
	for (int i = 0; i < 1000; i++) {
		x = x * 2862933555777941757ull + 3037000493ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

__attribute__((noinline)) uint64_t step(uint64_t x)
{
	return mix_cold(mix_hot(x));
}

int main(int argc, char **argv)
{
	uint64_t end = burn_cpu_now() + (uint64_t)(burn_arg(argc, argv, 1, 1.0) * 1e9);
	uint64_t x = 1;

	while (burn_cpu_now() < end)
		for (int i = 0; i < 64; i++)
			x = step(x);
	burn_sink = x;
	printf("inlined: done\n");
	return 0;
}
