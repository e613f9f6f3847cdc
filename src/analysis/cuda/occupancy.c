/*
 * occupancy.c — blocks per SM and estimated occupancy of a kernel launch, the
 * way Kineto computes them, but from C: see research/cupti.md §4 for the
 * three places where C defaults differ from the C++ ones and change results.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "occupancy.h"

#ifdef CBN_HAVE_CUDA_HEADERS
#include <cuda_occupancy.h>
#endif

/* Shared memory the driver reserves per block on sm_80 and later when the
 * device record does not say (CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK
 * is 1 KiB on every sm_80+ part; CUPTI's device record has no such field). */
#define OCC_RESERVED_SMEM_SM80 1024u

int occ_available(void)
{
#ifdef CBN_HAVE_CUDA_HEADERS
	return 1;
#else
	return 0;
#endif
}

uint32_t occ_sm_count(const struct prof_cuda_device *dev, const struct prof_cuda_context *ctx)
{
	if (ctx && ctx->sm_count)
		return ctx->sm_count;
	return dev ? dev->sm_count : 0;
}

int occ_compute(const struct prof_cuda_device *dev, uint32_t sm_count, const struct prof_gpu_op *k,
		struct occ_result *r)
{
	double blocks, block_size;

	memset(r, 0, sizeof(*r));
	/* doubles: three int32 dimensions of a damaged record can overflow
	 * any integer product */
	blocks = (double)k->grid[0] * k->grid[1] * k->grid[2];
	block_size = (double)k->block[0] * k->block[1] * k->block[2];
	if (!sm_count || k->grid[0] <= 0 || k->grid[1] <= 0 || k->grid[2] <= 0 || k->block[0] <= 0 ||
	    k->block[1] <= 0 || k->block[2] <= 0 || block_size > INT_MAX)
		return -EINVAL;
	r->blocks_per_sm = blocks / sm_count;
#ifdef CBN_HAVE_CUDA_HEADERS
	{
		struct cudaOccDeviceProp prop;
		struct cudaOccFuncAttributes attr;
		struct cudaOccDeviceState state;
		struct cudaOccResult res;
		int max_threads_sm, active, bs = (int)block_size;

		/* cuda_occupancy.h divides by several of these: a device record
		 * that lacks them gives "unknown", not a crash */
		if (!dev || !dev->max_warps_per_sm || !dev->threads_per_warp || dev->threads_per_warp > 1024 ||
		    dev->max_warps_per_sm > 1024 || !dev->regs_per_sm || !dev->regs_per_block ||
		    !dev->max_threads_per_block || !dev->smem_per_sm || !dev->smem_per_block ||
		    dev->cc_major > 100)
			return -EINVAL;
		memset(&prop, 0, sizeof(prop));
		memset(&attr, 0, sizeof(attr));
		memset(&state, 0, sizeof(state));
		memset(&res, 0, sizeof(res));
		max_threads_sm = (int)(dev->max_warps_per_sm * dev->threads_per_warp);
		prop.computeMajor = (int)dev->cc_major;
		prop.computeMinor = (int)dev->cc_minor;
		prop.maxThreadsPerBlock = (int)dev->max_threads_per_block;
		prop.maxThreadsPerMultiprocessor = max_threads_sm;
		prop.regsPerBlock = (int)dev->regs_per_block;
		prop.regsPerMultiprocessor = (int)dev->regs_per_sm;
		prop.warpSize = (int)dev->threads_per_warp;
		prop.sharedMemPerBlock = dev->smem_per_block;
		prop.sharedMemPerMultiprocessor = dev->smem_per_sm;
		prop.numSms = (int)sm_count;
		prop.reservedSharedMemPerBlock = dev->reserved_smem_per_block;
		if (!prop.reservedSharedMemPerBlock && dev->cc_major >= 8)
			prop.reservedSharedMemPerBlock = OCC_RESERVED_SMEM_SM80;
		prop.sharedMemPerBlockOptin = dev->smem_per_block_optin;
		/* Unknown opt-in limit: per-SM shared memory minus the reserved
		 * part is the opt-in limit on every part since Volta (A100:
		 * 164 - 1 = 163 KiB, H100: 228 - 1 = 227 KiB). */
		if (!prop.sharedMemPerBlockOptin && dev->smem_per_sm)
			prop.sharedMemPerBlockOptin = dev->smem_per_sm - prop.reservedSharedMemPerBlock;

		attr.maxThreadsPerBlock = INT_MAX;
		attr.numRegs = (int)k->registers;
		attr.sharedSizeBytes = k->static_smem > 0 ? (size_t)k->static_smem : 0;
		attr.partitionedGCConfig = PARTITIONED_GC_OFF;
		/* C++'s converting constructor sets one barrier; {0} would mean
		 * none and skip the barrier limit on cc >= 9. */
		attr.numBlockBarriers = 1;
		if (k->shmem_limit_optin) {
			attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
			attr.maxDynamicSharedSizeBytes = k->dynamic_smem > 0 ? (size_t)k->dynamic_smem : 0;
		} else {
			attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_DEFAULT;
			attr.maxDynamicSharedSizeBytes = 0;
		}
		/* C's {0} means SHAREDMEM_CARVEOUT_MAX_L1, not the default the
		 * driver uses; that gives 1 block/SM instead of 13 for a
		 * 16 KiB kernel on H100. */
		state.cacheConfig = CACHE_PREFER_NONE;
		state.carveoutConfig = SHAREDMEM_CARVEOUT_DEFAULT;

		if (cudaOccMaxActiveBlocksPerMultiprocessor(&res, &prop, &attr, &state, bs,
							    k->dynamic_smem > 0 ? (size_t)k->dynamic_smem : 0) !=
		    CUDA_OCC_SUCCESS)
			return -EINVAL;
		active = res.activeBlocksPerMultiprocessor;
		r->active_blocks = active;
		r->occupancy = (active < r->blocks_per_sm ? (double)active : r->blocks_per_sm) *
			       block_size / max_threads_sm;
		return 0;
	}
#else
	(void)dev;
	return -ENOTSUP;
#endif
}
