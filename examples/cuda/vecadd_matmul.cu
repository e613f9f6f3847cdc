/*
 * vecadd_matmul.cu — a vector add and a naive matrix multiply, with NVTX
 * ranges "setup", "compute" and "verify" around the phases.  Usage:
 * vecadd_matmul [SCALE]; prints "vecadd_matmul: ok ..." or exits 1.
 */
#include <cmath>
#include <cstdio>
#include <vector>

#include <nvtx3/nvToolsExt.h>

#include "check.h"

__global__ void vecadd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

__global__ void matmul(const float *a, const float *b, float *c, int n)
{
	int row = blockIdx.y * blockDim.y + threadIdx.y;
	int col = blockIdx.x * blockDim.x + threadIdx.x;

	if (row < n && col < n) {
		float acc = 0.0f;

		for (int k = 0; k < n; k++)
			acc += a[row * n + k] * b[k * n + col];
		c[row * n + col] = acc;
	}
}

int main(int argc, char **argv)
{
	double scale = example_scale(argc, argv);
	int nv = (int)(scale * (1 << 24));
	int nm = 1024;
	int reps = (int)(scale * 10) > 0 ? (int)(scale * 10) : 1;
	float *da, *db, *dc, *ma, *mb, *mc;

	nvtxRangePushA("setup");
	std::vector<float> a(nv), b(nv), c(nv);
	std::vector<float> A((size_t)nm * nm), B((size_t)nm * nm), C((size_t)nm * nm);
	for (int i = 0; i < nv; i++) {
		a[i] = (float)(i % 1000);
		b[i] = 2.0f * (float)(i % 7);
	}
	for (size_t i = 0; i < A.size(); i++) {
		A[i] = (float)((int)(i % 13) - 6) / 8.0f;
		B[i] = (float)((int)(i % 5) - 2) / 4.0f;
	}
	CHECK_CUDA(cudaMalloc(&da, nv * sizeof(float)));
	CHECK_CUDA(cudaMalloc(&db, nv * sizeof(float)));
	CHECK_CUDA(cudaMalloc(&dc, nv * sizeof(float)));
	CHECK_CUDA(cudaMalloc(&ma, A.size() * sizeof(float)));
	CHECK_CUDA(cudaMalloc(&mb, B.size() * sizeof(float)));
	CHECK_CUDA(cudaMalloc(&mc, C.size() * sizeof(float)));
	CHECK_CUDA(cudaMemcpy(da, a.data(), nv * sizeof(float), cudaMemcpyHostToDevice));
	CHECK_CUDA(cudaMemcpy(db, b.data(), nv * sizeof(float), cudaMemcpyHostToDevice));
	CHECK_CUDA(cudaMemcpy(ma, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice));
	CHECK_CUDA(cudaMemcpy(mb, B.data(), B.size() * sizeof(float), cudaMemcpyHostToDevice));
	nvtxRangePop();

	nvtxRangePushA("compute");
	for (int r = 0; r < reps; r++) {
		vecadd<<<(nv + 255) / 256, 256>>>(da, db, dc, nv);
		CHECK_LAUNCH();
		matmul<<<dim3(nm / 16, nm / 16), dim3(16, 16)>>>(ma, mb, mc, nm);
		CHECK_LAUNCH();
	}
	CHECK_CUDA(cudaDeviceSynchronize());
	nvtxRangePop();

	nvtxRangePushA("verify");
	CHECK_CUDA(cudaMemcpy(c.data(), dc, nv * sizeof(float), cudaMemcpyDeviceToHost));
	CHECK_CUDA(cudaMemcpy(C.data(), mc, C.size() * sizeof(float), cudaMemcpyDeviceToHost));
	int bad = 0;
	for (int i = 0; i < nv; i++)
		bad += c[i] != a[i] + b[i];
	for (int s = 0; s < 64; s++) {
		int row = (s * 97) % nm, col = (s * 31) % nm;
		double acc = 0;

		for (int k = 0; k < nm; k++)
			acc += (double)A[(size_t)row * nm + k] * B[(size_t)k * nm + col];
		bad += std::fabs(acc - C[(size_t)row * nm + col]) > 1e-2 * (1 + std::fabs(acc));
	}
	nvtxRangePop();

	CHECK_CUDA(cudaFree(da));
	CHECK_CUDA(cudaFree(db));
	CHECK_CUDA(cudaFree(dc));
	CHECK_CUDA(cudaFree(ma));
	CHECK_CUDA(cudaFree(mb));
	CHECK_CUDA(cudaFree(mc));
	if (bad) {
		std::printf("vecadd_matmul: FAILED (%d wrong values)\n", bad);
		return 1;
	}
	std::printf("vecadd_matmul: ok (%d elements, %dx%d matmul, %d reps)\n", nv, nm, nm, reps);
	return 0;
}
