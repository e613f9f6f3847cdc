/*
 * step_spiky — a step loop with a slow step every 10th: 30 steps, each marked
 * with CBN_STEP() and wrapped in a "train_step" range, running train_step();
 * iterations 0, 10 and 20 (steps 1, 11 and 21, as torch numbers them) also
 * run slow_path(), so they take about 5x the others.
 * ≈ 0.45 s of CPU at SCALE 1.  Usage: step_spiky [SCALE].  Runs the same
 * without cbottleneck.
 */
#include <stdio.h>

#include "burn.h"
#include "cbottleneck.h"

#define STEPS 30

__attribute__((noinline)) void slow_path(uint64_t ns)
{
	BURN_CPU(ns);
}

__attribute__((noinline)) void compute(uint64_t ns)
{
	BURN_CPU(ns);
}

__attribute__((noinline)) void load_batch(uint64_t ns)
{
	BURN_CPU(ns);
}

__attribute__((noinline)) void train_step(int i, uint64_t unit)
{
	if (i % 10 == 0)
		slow_path(4 * unit);
	compute(unit);
	burn_sink++; /* not a tail call: train_step() stays on the stack */
}

int main(int argc, char **argv)
{
	double scale = burn_arg(argc, argv, 1, 1.0);
	uint64_t unit = (uint64_t)(scale * 10e6); /* 10 ms a normal step */

	for (int i = 0; i < STEPS; i++) {
		CBN_STEP();
		CBN_RANGE_PUSH("train_step");
		train_step(i, unit);
		CBN_RANGE_POP();
		load_batch(unit / 4);
	}
	printf("step_spiky: done (%d steps)\n", STEPS);
	return 0;
}
