/*
 * crash — dies of SIGSEGV after burning ≈ SCALE seconds of CPU in before_crash();
 * the profile must keep those samples.  Usage: crash [SCALE].
 */
#include <stdio.h>

#include "burn.h"

__attribute__((noinline)) void before_crash(uint64_t ns)
{
	BURN_CPU(ns);
}

int main(int argc, char **argv)
{
	double scale = burn_arg(argc, argv, 1, 1.0);
	volatile int *volatile p = NULL;

	before_crash((uint64_t)(scale * 1e9));
	printf("crash: crashing now\n");
	fflush(stdout);
	*p = 1;
	return 0;
}
