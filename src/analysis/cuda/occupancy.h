/*
 * occupancy.h — theoretical occupancy and blocks per SM of one kernel launch,
 * computed with NVIDIA's header-only cuda_occupancy.h when the toolkit headers
 * were present at build time.  Pure functions, launcher side only.
 */
#ifndef CBN_OCCUPANCY_H
#define CBN_OCCUPANCY_H

#include <stdint.h>

#include "profile.h"

struct occ_result {
	int active_blocks;       /* cudaOccResult.activeBlocksPerMultiprocessor */
	double blocks_per_sm;    /* gridX*gridY*gridZ / sm_count */
	double occupancy;        /* min(active_blocks, blocks_per_sm) * blockSize / maxThreadsPerSM */
};

/* 1 when this build can compute occupancy (cuda_occupancy.h was available). */
int occ_available(void);

/* SM count a kernel ran on: the context's (green contexts may have fewer SMs)
 * when nonzero, else the device's.  0 when unknown. */
uint32_t occ_sm_count(const struct prof_cuda_device *dev, const struct prof_cuda_context *ctx);

/*
 * Occupancy of kernel k on dev with sm_count SMs.  Returns 0 and fills r;
 * -ENOTSUP when the build has no cuda_occupancy.h (r->blocks_per_sm is still
 * filled when sm_count is known), -EINVAL when the launch or device is not
 * usable (zero block size, unknown SM count, unsupported compute capability).
 */
int occ_compute(const struct prof_cuda_device *dev, uint32_t sm_count, const struct prof_gpu_op *k,
		struct occ_result *r);

#endif
