/*
 * mem_gpu.c — the GPU side of the memory view (memory.h): per device, live
 * bytes over time from CUPTI MEMORY2 records, reserved bytes from memory
 * pools, the peak, allocation sites from the API call's host stack, and
 * allocations not freed before the end.
 */
#include "memory.h"

/* Not written yet: no GPU spaces. */
int mem_gpu_analyze(const struct profile *p, struct mem_analysis *m)
{
	(void)p;
	(void)m;
	return 0;
}
