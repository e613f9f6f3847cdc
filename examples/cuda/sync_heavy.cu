/*
 * sync_heavy.cu — cudaDeviceSynchronize after every small kernel: the host
 * spends its time blocked in synchronization and the GPU idles between
 * kernels ("CPU blocked in sync").  Usage: sync_heavy [SCALE].
 */
#include <cstdio>

#include "check.h"

__global__ void step(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] = x[i] * 0.5f + 1.0f;
}

int main(int argc, char **argv)
{
	int iters = (int)(example_scale(argc, argv) * 2000);
	int n = 1 << 16;
	float *d, h = 0;

	CHECK_CUDA(cudaMalloc(&d, n * sizeof(float)));
	CHECK_CUDA(cudaMemset(d, 0, n * sizeof(float)));
	for (int i = 0; i < iters; i++) {
		step<<<(n + 255) / 256, 256>>>(d, n);
		CHECK_LAUNCH();
		CHECK_CUDA(cudaDeviceSynchronize());
	}
	CHECK_CUDA(cudaMemcpy(&h, d, sizeof(float), cudaMemcpyDeviceToHost));
	CHECK_CUDA(cudaFree(d));
	/* x <- x/2 + 1 converges to 2 */
	if (iters > 30 && (h < 1.99f || h > 2.01f)) {
		std::printf("sync_heavy: FAILED (x = %f, expected 2)\n", h);
		return 1;
	}
	std::printf("sync_heavy: ok (%d kernels, each followed by cudaDeviceSynchronize)\n", iters);
	return 0;
}
