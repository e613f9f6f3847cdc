/*
 * tiny_kernels.cu — a launch-bound loop: 10,000 (x SCALE) kernels that each do
 * almost nothing, so the host's launch overhead dominates and the GPU idles
 * between them (the "overhead-bound" verdict).  Usage: tiny_kernels [SCALE].
 * Prints the host time per launch (after the first, which loads the module),
 * which bench/cuda_gpu_overhead.sh compares with and without the profiler.
 */
#include <cstdio>
#include <ctime>

#include "check.h"

__global__ void tiny(int *counter)
{
	if (threadIdx.x == 0)
		atomicAdd(counter, 1);
}

int main(int argc, char **argv)
{
	int n = (int)(example_scale(argc, argv) * 10000);
	int *d, h = 0;
	struct timespec t0 = {0, 0}, t1;

	CHECK_CUDA(cudaMalloc(&d, sizeof(int)));
	CHECK_CUDA(cudaMemset(d, 0, sizeof(int)));
	for (int i = 0; i < n; i++) {
		if (i == 1)
			clock_gettime(CLOCK_MONOTONIC, &t0);
		tiny<<<1, 32>>>(d);
		CHECK_LAUNCH();
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK_CUDA(cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost));
	CHECK_CUDA(cudaFree(d));
	if (h != n) {
		std::printf("tiny_kernels: FAILED (counter %d, expected %d)\n", h, n);
		return 1;
	}
	double us = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / 1e3;
	if (n > 1)
		std::printf("tiny_kernels: ok (%d launches, %.3f us/launch on the host)\n", n,
			    us / (n - 1));
	else
		std::printf("tiny_kernels: ok (%d launches)\n", n);
	return 0;
}
