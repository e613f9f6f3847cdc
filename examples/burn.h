/*
 * burn.h — CPU burning helpers shared by the examples.  BURN_CPU is a macro so
 * the loop (and so the samples' leaf pc) lands in the function that uses it;
 * the work feeds a volatile sink so the compiler cannot drop it.
 */
#ifndef CBN_EXAMPLES_BURN_H
#define CBN_EXAMPLES_BURN_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t burn_sink;

/* CPU time of the calling thread, ns. */
static inline uint64_t burn_cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Burn ns nanoseconds of this thread's CPU time, in the enclosing function. */
#define BURN_CPU(ns)                                                                    \
	do {                                                                            \
		uint64_t burn_end_ = burn_cpu_now() + (uint64_t)(ns);                   \
		uint64_t burn_x_ = burn_sink;                                           \
		do {                                                                    \
			for (int burn_i_ = 0; burn_i_ < 20000; burn_i_++) {             \
				burn_x_ = burn_x_ * 6364136223846793005ull + 1442695040888963407ull; \
				__asm__ volatile("" : "+r"(burn_x_));                   \
			}                                                               \
		} while (burn_cpu_now() < burn_end_);                                   \
		burn_sink += burn_x_;                                                   \
	} while (0)

/* argv[i] as a positive double, else def. */
static inline double burn_arg(int argc, char **argv, int i, double def)
{
	double v;

	if (argc <= i)
		return def;
	v = strtod(argv[i], NULL);
	return v > 0 ? v : def;
}

#endif
