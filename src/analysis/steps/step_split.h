/*
 * step_split.h — the step-time breakdown: every instant of a process (or of
 * the whole run) given to the first of GPU kernels, data copies, sync wait,
 * launch/CPU and idle that was going on then, as TensorBoard's step-time
 * breakdown gives it to the first category by priority, so that the parts
 * of a step add up to its wall time.  Used for the steps (steps.c) and for
 * the HTML page's breakdown of a run without steps.  Launcher side only.
 */
#ifndef CBN_STEP_SPLIT_H
#define CBN_STEP_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

/* The parts, by priority: an instant goes to the first one going on. */
enum step_split_kind {
	STEP_SPLIT_KERNEL,   /* a kernel ran on a GPU */
	STEP_SPLIT_COPY,     /* a copy or set ran (and no kernel) */
	STEP_SPLIT_SYNC,     /* the host waited in a synchronizing CUDA call, the GPU idle */
	STEP_SPLIT_HOST,     /* a thread was on the CPU (samples) or in another CUDA call */
	STEP_SPLIT_IDLE,     /* none of these */
	STEP_SPLIT_N
};

/* What went on when, for one process or all: kind[i] from t[i] to t[i + 1],
 * idle before t[0] and from t[n - 1] on. */
struct step_split_line {
	uint64_t *t;
	uint8_t *kind;
	size_t n;
};

/* The line of process proc (index into prof.processes; PROF_NONE: every
 * process together).  0 or -ENOMEM. */
int step_split_build(const struct profile *p, uint32_t proc, struct step_split_line *l);
/* [start, end) split into out[STEP_SPLIT_N] ns, which add up to end - start. */
void step_split_measure(const struct step_split_line *l, uint64_t start, uint64_t end,
			uint64_t out[STEP_SPLIT_N]);
void step_split_free(struct step_split_line *l);

/* A CUDA API call that synchronizes (cudaDeviceSynchronize, cuStreamSynchronize,
 * ...): the host waits in it for the GPU. */
int step_split_is_sync_api(const char *name);

#endif
