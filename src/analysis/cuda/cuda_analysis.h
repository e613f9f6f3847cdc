/*
 * cuda_analysis.h — CUDA analysis of a loaded profile: the autograd-style rows
 * (ranges, API functions, kernels, copies, sets), nsys-style kernel / memop /
 * API summaries, launch sites, the overview metrics with a verdict, rule-based
 * recommendations and the CUDA status lines.  Launcher side only; the result
 * is owned by the caller and freed with cuda_analysis_free().  Strings that
 * name things (kernel names, files) point into the profile, which must outlive
 * the analysis; generated text (status lines, recommendations) is owned here.
 * Every threshold is a named constant below and documented in docs/cuda.md.
 * (Not named cuda.h: that is NVIDIA's driver API header, which this one would
 * shadow on an include path that has both.)
 */
#ifndef CBN_CUDA_ANALYSIS_H
#define CBN_CUDA_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "rules.h"

/* --- thresholds (docs/cuda.md, "Recommendations") ------------------------ */
#define CUDA_VERDICT_COMPUTE_UTIL 0.80      /* GPU utilization >= this: compute-bound */
#define CUDA_VERDICT_OVERHEAD_UTIL 0.50     /* below this, overhead-bound if launch-heavy */
#define CUDA_OVERHEAD_API_FRACTION 0.50     /* non-sync API time / window >= this */
#define CUDA_OVERHEAD_SHORT_KERNEL_NS 10000 /* median kernel < 10 us ... */
#define CUDA_OVERHEAD_MIN_KERNELS 100       /* ... over at least this many kernels */
#define CUDA_LOW_UTIL 0.50                  /* rule low-utilization */
#define CUDA_PAGEABLE_MIN_NS 100000       /* rule pageable-copies: >= 100 us of GPU time ... */
#define CUDA_PAGEABLE_MIN_SHARE 0.01       /* ... or >= 1 % of all GPU time */
#define CUDA_SYNC_FRACTION 0.25             /* rule sync-dominated: sync time / wall */
#define CUDA_TINY_KERNELS_MIN 1000          /* rule tiny-kernels: more launches than this */
#define CUDA_TINY_KERNEL_NS 10000           /* ... with a median below 10 us */
#define CUDA_SIGNIFICANT_SHARE 0.05         /* a kernel with >= 5 % of kernel time */
#define CUDA_SMALL_GRID_BLOCKS 1.0          /* rule small-grid: mean blocks/SM below this */
#define CUDA_COLD_RATIO 5.0                 /* rule cold-start: first > 5x median of the rest */
#define CUDA_COLD_MIN_NS 1000000            /* ... and first - median > 1 ms */
#define CUDA_VARIABLE_CV 0.5                /* rule variable-kernel: stddev/mean above this */
#define CUDA_VARIABLE_MIN_INSTANCES 10      /* ... over at least this many instances */
#define CUDA_MALLOC_CHURN_MIN_CALLS 20      /* rule cuda-malloc-churn: synchronous alloc/free calls */
#define CUDA_MALLOC_CHURN_SLICES 4          /* ... in at least this many of 10 slices of the run */
#define CUDA_MALLOC_CHURN_REPEAT 3          /* ... or inside a range name seen this many times */
#define CUDA_PINNED_HOST_SHARE 0.25         /* rule pinned-memory: pinned peak / host RAM */
#define CUDA_GPU_MEM_NEAR 0.90              /* rule gpu-memory-full: peak / device memory */
#define CUDA_LAYOUT_SHARE 0.05              /* rule channels-last: NCHW<->NHWC transposes,
					     * their share of kernel time */
#define CUDA_FP32_MATH_SHARE 0.10           /* rule fp32-math: fp32 GEMM/conv kernels' share */
#define CUDA_FUSE_KERNEL_NS 10000           /* rule fuse-elementwise: elementwise kernels
					     * shorter than 10 us ... */
#define CUDA_FUSE_MIN_PER_STEP 50           /* ... at least this many per step ... */
#define CUDA_FUSE_MIN_TOTAL 200             /* ... and in the whole run */

/* Kernel names in tables: at most this many columns (torch's name column),
 * two different kernels never printing the same text (names.h). */
#define CUDA_NAME_WIDTH 55

enum cuda_row_kind {
	CUDA_ROW_RANGE = 0,
	CUDA_ROW_API = 1,
	CUDA_ROW_KERNEL = 2,
	CUDA_ROW_MEMCPY = 3,
	CUDA_ROW_MEMSET = 4,
};

/* Durations of one group (ns).  stddev is the sample standard deviation
 * (n - 1), 0 for a single instance; med is the mean of the two middle values
 * when count is even. */
struct cuda_stats {
	uint64_t count, total, min, max;
	double avg, med, stddev;
};

/* One row of the autograd-style table. */
struct cuda_op_row {
	const char *name;
	const char *display;     /* name as tables print it: kernels shortened and told apart
				  * (CUDA_NAME_WIDTH), other rows the name itself */
	uint32_t kind;           /* enum cuda_row_kind */
	uint64_t self_cpu_ns, cpu_total_ns, self_cuda_ns, cuda_total_ns, calls;
	/* Net bytes allocated inside the range / call on its own thread (torch's
	 * profile_memory columns; 0 unless cuda_analysis.has_mem): host from the
	 * sampled allocation records (estimates), CUDA from the calls' own
	 * MEMORY2 records of device memory (exact); self = minus the children. */
	double cpu_mem, self_cpu_mem;
	int64_t cuda_mem, self_cuda_mem;
};

struct cuda_kernel_row {
	const char *name;
	const char *display;     /* shortened for tables, unique among kernels */
	struct cuda_stats t;
	double time_pct;         /* of all kernel time, 0..100 */
	int32_t grid[3], block[3];   /* of the first instance */
	uint32_t registers;
	int32_t static_smem, dynamic_smem;
	int config_varies;       /* some instance had another grid/block/regs/smem */
	double blocks_per_sm;    /* duration-weighted mean; < 0 unknown (no SM count) */
	double est_occupancy;    /* duration-weighted mean, 0..1; < 0 unknown */
	uint64_t first_ns;       /* duration of the earliest instance */
	double rest_med_ns;      /* median of the other instances (0 when count < 2) */
};

struct cuda_memop_row {
	const char *name;        /* "[CUDA memcpy HtoD]", "[CUDA memset]", ... */
	uint32_t kind;           /* CUDA_ROW_MEMCPY or CUDA_ROW_MEMSET */
	uint32_t copy_kind;      /* enum cbn_copy_kind of the first op (memcpy) */
	struct cuda_stats t;
	uint64_t bytes;
	double time_pct;         /* of all memop time */
	uint64_t pageable, pageable_ns, pageable_bytes;   /* host side pageable */
	uint64_t pinned, pinned_ns, pinned_bytes;         /* host side pinned */
};

struct cuda_api_row {
	const char *name;
	struct cuda_stats t;
	double time_pct;         /* of all API time */
};

/* One launch site: the first frame of the user's code on the launching
 * call's stack (docs/cuda.md, "Launch sites") and the innermost operator
 * there; so "train.py:17(step) -> aten::addmm -> kernel". */
struct cuda_site {
	const char *function, *file, *module;
	uint32_t line;
	const char *op;          /* innermost operator on the launch stack, "" none */
	const char *kernel;      /* the kernel (copy, set) with the most GPU time from here */
	const char *kernel_display;   /* ... as tables print it */
	uint64_t kernel_ns;      /* ... and its GPU time from here */
	uint64_t kernels;        /* distinct kernels, copies and sets launched from here */
	uint64_t launches;       /* API calls from here that launched GPU work */
	uint64_t gpu_ns;         /* GPU time of that work */
};

struct cuda_totals {
	uint64_t kernels, kernel_ns, memcpy, memcpy_ns, memcpy_bytes, memset, memset_ns;
	uint64_t api_calls, api_ns, sync_ns, gpu_busy_ns;
};

struct cuda_overview {
	uint64_t window_start, window_end, window_ns;   /* first to last GPU activity */
	uint32_t ndevices;           /* devices with GPU activity */
	double gpu_utilization;      /* 0..1, < 0 when there is no GPU work */
	double est_sm_efficiency;    /* 0..1, < 0 unknown */
	double est_achieved_occupancy;   /* 0..1, < 0 unknown */
	uint64_t cpu_ns;             /* sampled CPU time of all processes */
	uint64_t gpu_ns;             /* sum of kernel + memcpy + memset durations */
	uint64_t gpu_busy_ns;        /* sum over devices of |union of kernel intervals| */
	uint64_t sync_blocked_ns;    /* CPU time inside synchronizing calls */
	uint64_t launch_api_ns;      /* outermost non-synchronizing API calls, in the window */
	uint64_t idle_gaps_ns, largest_gap_ns, ngaps;   /* gaps between GPU activities */
	double median_kernel_ns;
	const char *verdict;         /* "overhead-bound" | "compute-bound" | "mixed" | "idle" */
};

struct cuda_status_row {
	uint32_t pid;
	const char *exe;             /* basename */
	const char *state;           /* "started" | "unavailable" | "finished" | "fork_child" */
	const char *message;         /* "" when none */
	int32_t cupti_error;
	uint32_t cupti_version, flush_timed_out;
	uint64_t dropped, zero_ts, buffers, records;
	int inferred;                /* no status record: CUDA runtime loaded, never initialized */
	const char *text;            /* inferred: the status line (owned by the analysis) */
	const char *note;            /* what the layer noted at its start, "" */
};

/* A span in which the program's own CUPTI client held part of CUPTI (its own
 * profiler got those records; this report has none of that part there). */
struct cuda_share_row {
	uint32_t pid;
	const char *exe;             /* basename */
	const char *what;            /* "api" (callbacks: API calls, launch stacks) or
	                              * "activity" (kernels, copies, memory) */
	const char *holder;          /* the client: subscriber name or module */
	uint64_t start_ns, end_ns;   /* since the run's start; end_ns 0: to the process's end */
	const char *note;            /* what the layer said when it took over again */
};

/* A GPU of the run, once however many processes used it: the same UUID (or,
 * in files without one, the same device id and name on the same host). */
struct cuda_gpu {
	const char *name;            /* "NVIDIA H100 80GB HBM3" */
	char uuid[48];               /* "GPU-8e2a3f1c-...", "" unknown */
	uint32_t id;                 /* device id in the first process that used it */
	uint64_t global_mem;         /* bytes */
	uint32_t sm_count, cc_major, cc_minor;
	uint32_t processes;          /* processes that used it */
};

/* Per device (CUDA device id as the records give it), same window. */
struct cuda_device_ov {
	uint32_t device;
	double utilization;          /* |union of kernel intervals| / window */
	double est_sm_efficiency;    /* < 0 unknown */
	uint64_t busy_ns;
};

struct cuda_analysis {
	struct cuda_op_row *ops;          size_t nops;
	struct cuda_kernel_row *kernels;  size_t nkernels;   /* by total desc */
	struct cuda_memop_row *memops;    size_t nmemops;    /* by total desc */
	struct cuda_api_row *api;         size_t napi;       /* by total desc */
	struct cuda_site *sites;          size_t nsites;     /* by gpu_ns desc */
	struct rule_finding *recos;       size_t nrecos;     /* rules.h */
	struct cuda_status_row *status;   size_t nstatus;
	struct cuda_share_row *shares;    size_t nshares;
	struct cuda_gpu *gpus;            size_t ngpus;      /* each GPU once */
	struct cuda_device_ov *devices;   size_t ndevices;   /* devices with GPU activity */
	char **status_lines;              size_t nstatus_lines;   /* "CUDA: ..." */
	struct cuda_totals totals;
	struct cuda_overview ov;
	uint64_t self_cpu_total_ns;       /* sum of op rows' self CPU */
	uint64_t self_cuda_total_ns;      /* sum of op rows' self CUDA */
	int has_data;                     /* any API call, GPU op or range */
	int has_mem;                      /* memory was recorded (host hooks on, or MEMORY2
	                                   * records): the op rows' memory columns mean
	                                   * something */
};

/* Analyze p.  Returns 0 and *out (NULL when the profile has no CUDA data and
 * no CUDA status at all), or the negative errno of the pass that failed
 * (-ENOMEM when memory is short). */
int cuda_analyze(const struct profile *p, struct cuda_analysis **out);
/* The same with the operators of p (ops.h; may be NULL): launch sites name
 * the innermost operator and pass over operator frames, and the rules can
 * say which operators launched what they found; and with p's memory view
 * (memory.h, analysed before: NULL when it has none), whose GPU spaces the
 * memory rules read.  cuda_analyze() builds the GPU part of that view itself
 * for callers without one. */
struct mem_analysis;
struct op_analysis;
int cuda_analyze_ops(const struct profile *p, const struct op_analysis *ops,
		     const struct mem_analysis *mem, struct cuda_analysis **out);
void cuda_analysis_free(struct cuda_analysis *a);

/* 1 if key is a key_averages sort key (cuda_time_total, cpu_time_total,
 * self_cuda_time_total, self_cpu_time_total, cuda_time, cpu_time, count, and
 * the device_* spellings torch accepts). */
int cuda_sort_key_valid(const char *key);
/* Sort a->ops by key (NULL or a key that is not a key_averages key: the
 * default, cuda_time_total when there is GPU time, else cpu_time_total).
 * Returns the key used. */
const char *cuda_sort_ops(struct cuda_analysis *a, const char *key);

/* Name used for a copy or set of this kind ("[CUDA memcpy HtoD]"...). */
const char *cuda_memop_name(uint32_t gpu_kind, uint32_t copy_kind);
/* 1 if an API function of this name blocks the calling thread until GPU work
 * finishes (cudaDeviceSynchronize, synchronous cudaMemcpy, cuCtxSynchronize...). */
int cuda_api_is_sync(const char *name);
/* 1 if a module basename belongs to the CUDA runtime/driver/CUPTI or to us:
 * frames there are skipped when looking for a launch site. */
int cuda_module_is_runtime(const char *module);

/* What a frame is to the launch-site search (the list is in cuda_names.c and
 * docs/cuda.md, "Launch sites"). */
enum cuda_frame_class {
	CUDA_FRAME_USER = 0,     /* the user's code: a launch site */
	CUDA_FRAME_VENDOR,       /* a vendor library or framework: cuBLAS, cuDNN, NCCL,
				  * CUTLASS, libtorch, ggml, ONNX Runtime, TensorFlow, and
				  * the framework's own Python files */
	CUDA_FRAME_INTERP,       /* the Python interpreter's C code */
	CUDA_FRAME_SYSTEM,       /* libc, libstdc++, the dynamic loader, libgomp */
};
/* The class of a frame: module basename, demangled function, source file of
 * the executing line (each may be NULL or ""). */
enum cuda_frame_class cuda_frame_class(const char *module, const char *function,
				       const char *file);
/* 1 if a source file is nvcc's generated code or runtime header: a .cudafe1.*
 * temporary (*.cudafe1.stub.c, *.cudafe1.cpp), crt/host_runtime.h, cuda_runtime.h. */
int cuda_file_is_generated(const char *file);
/* 1 if a source file is under a CUDA toolkit include directory (a "cuda*"
 * directory above "/include/"). */
int cuda_file_in_toolkit(const char *file);
/* 1 if a frame (demangled function name, source file or "") is launch glue in
 * the user's executable, skipped when looking for a launch site: a generated
 * file (cuda_file_is_generated()), __device_stub__*, __cudaLaunch*,
 * cudaLaunch*, __cudaPush/PopCallConfiguration, or a static cudart function
 * (name starting with cuda, __cuda or libcudart_static, file unknown or in
 * the toolkit). */
int cuda_frame_is_launch_glue(const char *function, const char *file);
/* 1 if the function is nvcc's __device_stub__* for some kernel. */
int cuda_frame_is_device_stub(const char *function);
/* 1 if a host function is the kernel's host wrapper: its name is the kernel's
 * (both demangled, compared without return type and parameter list), or the
 * mangled name the __device_stub__ it called stands for (stub may be NULL). */
int cuda_frame_is_host_wrapper(const char *function, const char *kernel, const char *stub);

#endif
