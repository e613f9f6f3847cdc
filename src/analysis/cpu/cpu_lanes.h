/*
 * cpu_lanes.h — each thread's CPU samples as nested slices of its stack's
 * frames: the CPU lanes of a timeline (the --trace writer's).  A walk, not a
 * table in struct analysis: a run has up to one slice per frame of every
 * sample (30 M for 1 M samples of 30 frames), and the trace keeps only
 * those its window and size cap hold.  Launcher side only.
 */
#ifndef CBN_CPU_LANES_H
#define CBN_CPU_LANES_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

#define CPU_LANE_TRUNCATED (UINT32_MAX - 1)  /* the "[truncated]" frame over a cut stack */

/* One frame open on a thread's stack from start to end (start < end). */
struct cpu_slice {
	int64_t start, end;      /* ns since the run's start (ranks on one clock:
				  * prof_rank_time) */
	uint32_t thread;         /* prof.threads index (always a valid one) */
	uint32_t func;           /* the frame's prof.funcs index as the stack has it,
				  * or CPU_LANE_TRUNCATED */
	uint32_t depth;          /* root 0 */
	uint8_t inlined;         /* an inlined frame */
};

/*
 * Call fn(ctx, slice) for every slice of p's samples; a non-zero return of
 * fn stops the walk and is returned, else 0 or -ENOMEM.
 *
 * A sample stamped ts with weight w covers [ts - w*period, ts]: the timer
 * fired after that much CPU time.  Consecutive samples of a thread are
 * joined when the gap between them is at most one period (timer jitter); a
 * longer gap means the thread was off CPU, and every open frame closes.
 * Frames common (root first, by function) with the previous sample stay
 * open; the rest close and the new ones open.  Slices come in thread order,
 * and within a thread in the order they close (deepest first at one time).
 * Samples of an unknown thread index make none.
 */
int cpu_lanes_walk(const struct profile *p, int (*fn)(void *ctx, const struct cpu_slice *s),
		   void *ctx);

/* At most how many slices the walk gives (each sample's frames, + 1 for a
 * "[truncated]" one) and the latest sample's time, as a slice's (INT64_MIN
 * without samples). */
void cpu_lanes_extent(const struct profile *p, uint64_t *bound, int64_t *last);

#endif
