/*
 * cudart_probe.c — a program linked with the REAL libcudart that asks for
 * devices, then burns CPU and exits with status 3.  On a machine without a
 * driver cudaGetDeviceCount fails (35) and the driver never calls the
 * injection: the e2e test checks the program still runs, keeps its exit
 * status and gets a CPU profile.  On a GPU machine it initializes CUDA.
 */
#include <stdio.h>
#include <time.h>

#include <cuda_runtime_api.h>

static volatile unsigned long probe_sink;

__attribute__((noinline)) static void probe_spin(int ms)
{
	struct timespec t0, t;
	unsigned long x = 1;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 10000; i++)
			x = x * 2862933555777941757ul + 3037000493ul;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	probe_sink = x;
}

int main(void)
{
	int n = -1;
	cudaError_t e = cudaGetDeviceCount(&n);

	printf("cudart_probe: cudaGetDeviceCount -> %d (%s), devices %d\n", (int)e,
	       cudaGetErrorName(e), e == cudaSuccess ? n : 0);
	probe_spin(200);
	return 3;
}
