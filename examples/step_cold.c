/*
 * step_cold — a step loop with a cold start: 12 steps, each marked with
 * CBN_STEP() and wrapped in a "train_step" range, running train_step(); steps
 * 0 and 1 also run warm_caches(), so they take about 10x the others.  Between
 * steps load_batch() works outside train_step(), so --step-func train_step
 * sees a gap.  ≈ 0.9 s of CPU at SCALE 1.  Usage: step_cold [SCALE].
 * Runs the same without cbottleneck.
 */
#include <stdio.h>

#include "burn.h"
#include "cbottleneck.h"

#define STEPS 12

__attribute__((noinline)) void warm_caches(uint64_t ns)
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
	if (i < 2)
		warm_caches(10 * unit);
	compute(unit);
	burn_sink++; /* not a tail call: train_step() stays on the stack */
}

int main(int argc, char **argv)
{
	double scale = burn_arg(argc, argv, 1, 1.0);
	uint64_t unit = (uint64_t)(scale * 25e6); /* 25 ms a warm step */

	for (int i = 0; i < STEPS; i++) {
		CBN_STEP();
		CBN_RANGE_PUSH("train_step");
		train_step(i, unit);
		CBN_RANGE_POP();
		load_batch(unit / 4);
	}
	printf("step_cold: done (%d steps)\n", STEPS);
	return 0;
}
