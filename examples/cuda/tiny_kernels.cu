/*
 * tiny_kernels.cu — a launch-bound loop: 10,000 (x SCALE) kernels that each do
 * almost nothing, so the host's launch overhead dominates and the GPU idles
 * between them (the "overhead-bound" verdict).  Usage: tiny_kernels [SCALE].
 */
#include <cstdio>

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

	CHECK_CUDA(cudaMalloc(&d, sizeof(int)));
	CHECK_CUDA(cudaMemset(d, 0, sizeof(int)));
	for (int i = 0; i < n; i++) {
		tiny<<<1, 32>>>(d);
		CHECK_LAUNCH();
	}
	CHECK_CUDA(cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost));
	CHECK_CUDA(cudaFree(d));
	if (h != n) {
		std::printf("tiny_kernels: FAILED (counter %d, expected %d)\n", h, n);
		return 1;
	}
	std::printf("tiny_kernels: ok (%d launches)\n", n);
	return 0;
}
