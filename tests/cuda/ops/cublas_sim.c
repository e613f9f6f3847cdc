/*
 * cublas_sim.c — libcublas_sim.so: stands for cuBLAS in the simulated
 * PyTorch loop (ops_sim.h), a vendor library the launch-site search must
 * pass over: its module name starts with libcublas.
 */
#include "fakecuda.h"
#include "ops_sim.h"

static volatile int sink;

__attribute__((noinline, visibility("default"))) void cublasSgemm_sim(unsigned stream)
{
	static const struct fakecuda_kernel k = { .name = OPS_SGEMM, .gpu_ns = OPS_SGEMM_NS,
						  .grid = { 264, 1, 1 }, .block = { 256, 1, 1 },
						  .registers = 96 };

	fakecuda_launch(&k, stream);
	sink++;   /* not a tail call: this frame stays on the stack */
}
