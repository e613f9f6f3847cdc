/*
 * workload.h — the simulated CUDA workloads with known truth shared by the
 * in-process layer test (test_layer.c) and the program the e2e tests run under
 * cbottleneck (cuda_workload.c).  The WL_* numbers are the truth the tests
 * assert; change them together with the tests.
 */
#ifndef CBN_CUDA_WORKLOAD_H
#define CBN_CUDA_WORKLOAD_H

#include <stdint.h>

#define WL_A_NAME "_Z7kernelAPfi"             /* kernelA(float*, int) */
#define WL_A_COUNT 100
#define WL_A_NS 50000ull
#define WL_B_NAME "_Z7kernelBPKfPfi"          /* kernelB(float const*, float*, int) */
#define WL_B_COUNT 10
#define WL_B_NS 2000000ull
#define WL_C_NAME "_Z7kernelCv"               /* kernelC(), from 2 threads */
#define WL_C_THREADS 2
#define WL_C_PER_THREAD 5
#define WL_C_NS 10000ull
#define WL_D_NAME "kernelD_driver"            /* cuLaunchKernel only */
#define WL_D_COUNT 3
#define WL_D_NS 30000ull

#define WL_E_NAME "_Z7kernelEPf"             /* kernelE(float*), nvcc-shaped chain: wl_nvcc() */
#define WL_E_COUNT 7
#define WL_E_NS 40000ull

#define WL_HTOD_COUNT 20                      /* pageable */
#define WL_HTOD_BYTES (1ull << 20)
#define WL_HTOD_NS 100000ull
#define WL_DTOH_COUNT 2                       /* pinned */
#define WL_DTOH_BYTES (4ull << 20)
#define WL_DTOH_NS 200000ull
#define WL_MEMSET_BYTES (1ull << 20)
#define WL_MEMSET_NS 20000ull
#define WL_MALLOCS 2

/* Runtime API calls the main workload makes (kernel E is not part of it). */
#define WL_LAUNCH_CALLS (WL_A_COUNT + WL_B_COUNT + WL_C_THREADS * WL_C_PER_THREAD)
#define WL_MEMCPY_CALLS (WL_HTOD_COUNT + WL_DTOH_COUNT)
#define WL_DEVSYNC_CALLS (WL_B_COUNT + 1)
#define WL_STREAMSYNC_CALLS (WL_C_THREADS * WL_C_PER_THREAD)

/* The GPU memory workload, wl_memory(): inside NVTX range "mem", a step loop
 * of WL_MEM_STEPS steps, each cudaMalloc + cudaFree of WL_MEM_STEP_BYTES from
 * alloc_step() (the churn the pool rule names), then WL_MEM_ASYNC blocks of
 * WL_MEM_ASYNC_BYTES from the default pool by cudaMallocAsync (alloc_async),
 * a peak block of WL_MEM_PEAK_BYTES by cudaMalloc from alloc_peak() while
 * those are live (the device's peak = step-free base + async + peak), pinned
 * host memory by cudaMallocHost and cudaHostAlloc (WL_MEM_PINNED_BYTES each)
 * and one failing cudaHostAlloc, managed memory (WL_MEM_MANAGED_BYTES), then
 * frees all but WL_MEM_LEAK_BYTES (cudaMalloc from alloc_leak(), never freed)
 * and trims the pool. */
#define WL_MEM_STEPS 40
#define WL_MEM_STEP_BYTES (8ull << 20)
#define WL_MEM_ASYNC 4
#define WL_MEM_ASYNC_BYTES (16ull << 20)
#define WL_MEM_PEAK_BYTES (512ull << 20)
#define WL_MEM_PINNED_BYTES (64ull << 20)
#define WL_MEM_MANAGED_BYTES (32ull << 20)
#define WL_MEM_LEAK_BYTES (4ull << 20)
int wl_memory(void);
uint64_t alloc_step(void);
uint64_t alloc_async(void);
uint64_t alloc_peak(void);
uint64_t alloc_leak(void);

/* The simulated NCCL workload, wl_nccl(): WL_NCCL_STEPS steps, each opened by
 * cbn_step() (one more cbn_step() closes the last), whose GPU ops lie at exact
 * offsets from the step's first kernel (U = WL_NCCL_UNIT_NS), which starts
 * WL_NCCL_LEAD_NS after the marker (the host's time to queue the step):
 *   stream 1: compute kernels [0, 2U) and [2U, 6U), then a DtoD copy [8U, 9U)
 *   stream 2: ncclDevKernel_AllReduce_Sum_f32_RING_LL [2U, 5U), then a kernel
 *             with a plain name launched inside NVTX domain "NCCL" range
 *             "ncclAllGather" [5U, 8U) (communication by the range)
 * so computation only [0, 2U) + [8U, 9U), overlapping [2U, 6U), communication
 * only [6U, 8U); the host then waits for the GPU and sleeps WL_NCCL_IDLE_MS.
 * Other (wall - GPU busy) holds the lead, that sleep and the host's
 * wake-up latencies. */
#define WL_NCCL_STEPS 5
#define WL_NCCL_UNIT_NS 2000000ull
#define WL_NCCL_COMP_ONLY_NS (3 * WL_NCCL_UNIT_NS)
#define WL_NCCL_OVERLAP_NS (4 * WL_NCCL_UNIT_NS)
#define WL_NCCL_COMM_ONLY_NS (2 * WL_NCCL_UNIT_NS)
#define WL_NCCL_IDLE_MS 3
#define WL_NCCL_LEAD_NS 20000000ull
/* as nvcc mangles NCCL 2.19+'s kernels */
#define WL_NCCL_KERNEL "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE"
#define WL_NCCL_PACK "_Z11pack_bufferPf"   /* pack_buffer(float*), in the NCCL range */
int wl_nccl(void);

/* The main workload: NVTX ranges "setup", "compute", "teardown" around its
 * phases; returns 0.  Calls fakecuda_init itself. */
int wl_main(void);
/* WL_E_COUNT launches through an nvcc-shaped call chain, then a sync. */
int wl_nvcc(void);
/* Launches n long kernels and returns without synchronizing. */
int wl_nosync(int n);
/* Burns about ms milliseconds of CPU in host_work(). */
void host_work(int ms);

/* The launching functions, exported so tests can resolve stacks to them. */
void launch_a(void);
void launch_b(void);
void copy_input(void);
void launch_e_like_nvcc(void);
void __device_stub__Z7kernelEPf(float *p);
void _Z7kernelEPf(float *p);

#endif
