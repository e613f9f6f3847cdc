/*
 * ring_phases.c — a run whose first part is not its last: early_phase burns
 * the first 1.5 s of the process's CPU, late_phase the next second, each
 * called 60 frames deep so that every sample is large (the session file
 * fills fast).  Phases of CPU time, not wall time: on a loaded machine the
 * run takes longer, and as many samples (the ring's last 0.5 s of wall
 * time is then still inside late_phase).
 * Under `cbottleneck --ring 0.5s --buffer-mb 1` only late_phase may remain,
 * in a file of at most 1 MiB.  Usage: ring_phases [SCALE] (times x SCALE).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void early_phase(double until)
{
	while (now() < until)
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
}

__attribute__((noinline)) static void late_phase(double until)
{
	while (now() < until)
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
}

__attribute__((noinline)) static void deep(int d, void (*f)(double), double until)
{
	if (d)
		deep(d - 1, f, until);
	else
		f(until);
	sink++; /* not a tail call: every level stays on the stack */
}

int main(int argc, char **argv)
{
	double scale = argc > 1 ? atof(argv[1]) : 1.0, t = now();

	deep(60, early_phase, t + 1.5 * scale);
	deep(60, late_phase, t + 2.5 * scale);
	puts("ring_phases: done");
	return 0;
}
