/*
 * copies.cu — the same host<->device copies from pageable (malloc) and from
 * pinned (cudaMallocHost) memory, so the profile shows the difference in copy
 * time and the pageable-copies recommendation.  Usage: copies [SCALE].
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "check.h"

static float time_copies(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, int reps)
{
	cudaEvent_t t0, t1;
	float ms = 0;

	CHECK_CUDA(cudaEventCreate(&t0));
	CHECK_CUDA(cudaEventCreate(&t1));
	CHECK_CUDA(cudaEventRecord(t0));
	for (int i = 0; i < reps; i++)
		CHECK_CUDA(cudaMemcpy(dst, src, bytes, kind));
	CHECK_CUDA(cudaEventRecord(t1));
	CHECK_CUDA(cudaEventSynchronize(t1));
	CHECK_CUDA(cudaEventElapsedTime(&ms, t0, t1));
	CHECK_CUDA(cudaEventDestroy(t0));
	CHECK_CUDA(cudaEventDestroy(t1));
	return ms;
}

int main(int argc, char **argv)
{
	double scale = example_scale(argc, argv);
	size_t bytes = 64u << 20;
	int reps = (int)(scale * 8) > 0 ? (int)(scale * 8) : 1;
	char *pageable = (char *)std::malloc(bytes), *pinned, *dev;

	if (!pageable) {
		std::fprintf(stderr, "copies: out of memory\n");
		return 1;
	}
	std::memset(pageable, 1, bytes);
	CHECK_CUDA(cudaMallocHost(&pinned, bytes));
	std::memset(pinned, 1, bytes);
	CHECK_CUDA(cudaMalloc(&dev, bytes));

	float h_pg = time_copies(dev, pageable, bytes, cudaMemcpyHostToDevice, reps);
	float h_pn = time_copies(dev, pinned, bytes, cudaMemcpyHostToDevice, reps);
	float d_pg = time_copies(pageable, dev, bytes, cudaMemcpyDeviceToHost, reps);
	float d_pn = time_copies(pinned, dev, bytes, cudaMemcpyDeviceToHost, reps);
	int ok = pageable[bytes - 1] == 1 && pinned[bytes - 1] == 1;

	CHECK_CUDA(cudaFree(dev));
	CHECK_CUDA(cudaFreeHost(pinned));
	std::free(pageable);
	double gb = (double)bytes * reps / 1e9;
	std::printf("copies: HtoD pageable %.1f GB/s, pinned %.1f GB/s; DtoH pageable %.1f GB/s, "
		    "pinned %.1f GB/s\n",
		    gb / (h_pg / 1e3), gb / (h_pn / 1e3), gb / (d_pg / 1e3), gb / (d_pn / 1e3));
	std::printf("copies: %s (%d x %zu MiB each way)\n", ok ? "ok" : "FAILED", reps, bytes >> 20);
	return ok ? 0 : 1;
}
