/*
 * split — the CPU split example: heavy() does FACTOR units of work for each unit
 * light() does.  Usage: split [SCALE [FACTOR]]; SCALE ≈ seconds of CPU
 * (default 1), FACTOR default 3, so a profile shows heavy:light = 3:1.
 */
#include <stdio.h>

#include "burn.h"

__attribute__((noinline)) void light(uint64_t ns)
{
	BURN_CPU(ns);
}

__attribute__((noinline)) void heavy(uint64_t ns)
{
	BURN_CPU(ns);
}

int main(int argc, char **argv)
{
	double scale = burn_arg(argc, argv, 1, 1.0);
	double factor = burn_arg(argc, argv, 2, 3.0);
	/* Rounds of ~40 ms keep both functions interleaved over the run. */
	double total = scale * 1e9;
	int rounds = (int)(total / 40e6) + 1;
	uint64_t unit = (uint64_t)(total / rounds / (factor + 1.0));

	for (int r = 0; r < rounds; r++) {
		light(unit);
		heavy((uint64_t)(unit * factor));
	}
	printf("split: done\n");
	return 0;
}
