/*
 * ranges — annotations with include/cbottleneck.h: each of STEPS steps is a
 * CBN_STEP() with a "load" range (1 unit of CPU in load_batch()) and a
 * "compute" range (2 units in compute()), ≈ SCALE seconds of CPU in all.
 * Usage: ranges [SCALE [STEPS]].  Runs the same without cbottleneck.
 */
#include <stdio.h>

#include "burn.h"
#include "cbottleneck.h"

__attribute__((noinline)) void load_batch(uint64_t ns)
{
	BURN_CPU(ns);
}

__attribute__((noinline)) void compute(uint64_t ns)
{
	BURN_CPU(ns);
}

int main(int argc, char **argv)
{
	double scale = burn_arg(argc, argv, 1, 1.0);
	int steps = (int)burn_arg(argc, argv, 2, 10);
	uint64_t unit = (uint64_t)(scale * 1e9 / 3.0 / steps);

	for (int i = 0; i < steps; i++) {
		CBN_RANGE_PUSH("step");
		CBN_RANGE_PUSH("load");
		load_batch(unit);
		CBN_RANGE_POP();
		CBN_RANGE_PUSH("compute");
		compute(2 * unit);
		CBN_RANGE_POP();
		CBN_RANGE_POP();
		CBN_STEP();
	}
	printf("ranges: done (%d steps)\n", steps);
	return 0;
}
