/*
 * check.h — error checking shared by the CUDA examples: every CUDA call is
 * checked, and a failure prints what failed and exits 1.
 */
#ifndef CBN_EXAMPLES_CHECK_H
#define CBN_EXAMPLES_CHECK_H

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#define CHECK_CUDA(call)                                                                      \
	do {                                                                                  \
		cudaError_t e_ = (call);                                                      \
		if (e_ != cudaSuccess) {                                                      \
			std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, \
				     #call, cudaGetErrorName(e_), cudaGetErrorString(e_));    \
			std::exit(1);                                                         \
		}                                                                             \
	} while (0)

/* After a launch: the launch itself, then (optionally) its execution. */
#define CHECK_LAUNCH() CHECK_CUDA(cudaGetLastError())

static inline double example_scale(int argc, char **argv)
{
	double s = argc > 1 ? std::atof(argv[1]) : 1.0;
	return s > 0 ? s : 1.0;
}

#endif
