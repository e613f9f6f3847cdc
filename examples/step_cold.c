/*
 * step_cold — a step loop with a cold start: 12 iterations, each marked with
 * CBN_STEP() and wrapped in a "train_step" range, running train_step();
 * iterations 0 and 1 also run warm_caches(), so they take about 10x the
 * others.  Between them load_batch() works outside train_step(), so
 * --step-func train_step sees a gap.  CBN_STEP() starts each iteration (so
 * iteration i is step i + 1, as torch numbers them), or with END ends it, as
 * torch's prof.step() does (iteration i is step i).  ≈ 0.9 s of CPU at
 * SCALE 1.  Usage: step_cold [SCALE [end]].  Runs the same without
 * cbottleneck.
 */
#include <stdio.h>
#include <string.h>

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

	int at_end = argc > 2 && strcmp(argv[2], "end") == 0;

	for (int i = 0; i < STEPS; i++) {
		if (!at_end)
			CBN_STEP();
		CBN_RANGE_PUSH("train_step");
		train_step(i, unit);
		CBN_RANGE_POP();
		load_batch(unit / 4);
		if (at_end)
			CBN_STEP();
	}
	printf("step_cold: done (%d steps)\n", STEPS);
	return 0;
}
