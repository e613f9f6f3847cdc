/*
 * recursion — deep stacks: recurse(depth) goes ~200 levels down, burning CPU at
 * every level and more at the leaf, over and over for ≈ SCALE seconds of CPU.
 * Usage: recursion [SCALE].
 */
#include <stdio.h>

#include "burn.h"

#define DEPTH 200

__attribute__((noinline)) int recurse(int depth)
{
	int r;

	BURN_CPU(20000); /* 20 µs per level */
	if (depth == 0) {
		BURN_CPU(4000000); /* 4 ms at the leaf */
		return 1;
	}
	r = recurse(depth - 1);
	burn_sink += (uint64_t)r; /* work after the call: no tail call */
	return r + 1;
}

int main(int argc, char **argv)
{
	double scale = burn_arg(argc, argv, 1, 1.0);
	uint64_t end = burn_cpu_now() + (uint64_t)(scale * 1e9);
	int r = 0;

	while (burn_cpu_now() < end)
		r = recurse(DEPTH);
	printf("recursion: done (depth %d)\n", r);
	return 0;
}
