/*
 * cmp_internal.h — what the pieces of `cbottleneck compare` share: parsed gate
 * expressions (cmp_expr.c), the evaluated rows (compare.c) and their writers
 * (cmp_output.c).  Not a contract: unit tests include it, nothing else should.
 */
#ifndef CBN_CMP_INTERNAL_H
#define CBN_CMP_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include "compare.h"

/* A delta within CMP_NOISE_K standard deviations of the sampling error is
 * "within noise": k = 2 keeps about 95% of unchanged runs from firing. */
#define CMP_NOISE_K 2.0

#define CMP_PATTERN_MAX 512
#define CMP_DEFAULT_TOP 10     /* functions gated by the default report */

enum cmp_level { CMP_LEVEL_FAIL = 1, CMP_LEVEL_WARN = 2 };

enum cmp_metric {
	CMP_M_WALL = 1,          /* run.wall_ns: one measurement */
	CMP_M_CPU,               /* run.cpu_ns: sampled */
	CMP_M_SAMPLES,           /* run.samples: sampled count */
	CMP_M_FUNC,              /* functions[name ~ pattern].self_ns|total_ns */
	CMP_M_LINE,              /* lines[file ~ pattern, line].self_ns */
	CMP_M_KERNEL,            /* cuda.kernels[name ~ pattern].total_ns|instances|avg_ns */
	CMP_M_API,               /* cuda.api[name ~ pattern].calls|total_ns|avg_ns */
	CMP_M_GPU,               /* cuda.totals / cuda.overview scalars */
	CMP_M_MEM_PEAK,          /* memory: the root process's host peak_bytes */
	CMP_M_MEM_LEAKED,        /* memory: host sites' live_end_bytes, summed */
	CMP_M_MEM_GPU,           /* memory.spaces[gpu, device N].peak_bytes */
	CMP_M_MEM_SITE,          /* memory.sites[function or file:line ~ pattern].bytes|allocs, summed */
	CMP_M_STEP_MEDIAN,       /* steps.median_ns: one measurement per step, the median */
	CMP_M_STEP_P90,          /* steps.p90_ns */
	CMP_M_STEP_COUNT,        /* steps.count */
	CMP_M_WAIT_TOTAL,        /* waiting.off_ns: off-CPU time, all threads (--off-cpu) */
	CMP_M_CPU_EFFICIENCY,    /* waiting.efficiency: parallel efficiency, a fraction */
	CMP_M_LOCK,              /* waiting.locks[function ~ pattern].wait_ns, summed */
	CMP_M_RANK_MAX_WALL,     /* distributed.ranks[].wall_ns, the largest */
	CMP_M_MPI_TIME,          /* distributed.mpi_ns: MPI time summed over ranks */
	CMP_M_IMBALANCE,         /* distributed.imbalance: max / mean compute per step */
	CMP_M_OP,                /* operators.rows[name ~ pattern]: cuda_total_ns|self_cuda_ns
				  * (exact), cpu_total_ns|self_cpu_ns (sampled), launches */
};

enum cmp_field {
	CMP_F_NONE = 0, CMP_F_SELF, CMP_F_TOTAL, CMP_F_CALLS, CMP_F_AVG,
	CMP_F_PEAK, CMP_F_BYTES, CMP_F_ALLOCS,   /* memory metrics */
	CMP_F_WAIT,                              /* lock[].wait */
	CMP_F_CUDA, CMP_F_SELF_CUDA, CMP_F_CPU, CMP_F_SELF_CPU, CMP_F_LAUNCHES,   /* op[] */
};

enum cmp_gpu {
	CMP_GPU_KERNELS = 1,     /* totals.kernels */
	CMP_GPU_KERNEL_TIME,     /* totals.kernel_ns */
	CMP_GPU_MEMCPY_BYTES,    /* totals.memcpy_bytes */
	CMP_GPU_MEMCPY_TIME,     /* totals.memcpy_ns */
	CMP_GPU_MEMCPYS,         /* totals.memcpy */
	CMP_GPU_API_CALLS,       /* totals.api_calls */
	CMP_GPU_SYNC_TIME,       /* totals.sync_ns */
	CMP_GPU_BUSY,            /* totals.gpu_busy_ns */
	CMP_GPU_UTILIZATION,     /* overview.gpu_utilization */
};

/* What a metric's numbers are; decides the accepted threshold units. */
enum cmp_unit { CMP_U_NS = 1, CMP_U_COUNT, CMP_U_BYTES, CMP_U_RATIO };

/* "+10%,>=5ms": fires when the change in direction dir exceeds value (a
 * fraction of the baseline when relative) and, with a floor, is also at least
 * floor in absolute terms. */
struct cmp_threshold {
	int dir;                 /* +1: an increase is bad; -1: a drop is bad */
	int relative;
	double value;            /* fraction (0.10 for 10%) or amount in the metric's unit */
	int has_floor;
	double floor;            /* amount in the metric's unit */
};

struct cmp_expr {
	const char *text;        /* as given; not owned */
	enum cmp_level level;
	enum cmp_metric metric;
	enum cmp_field field;
	enum cmp_gpu gpu;
	enum cmp_unit unit;
	char pattern[CMP_PATTERN_MAX]; /* fnmatch glob: function/kernel/API name, or line's file;
	                                * mem.gpu[]: the device number as given */
	unsigned long line;      /* line[] only; mem.site[FILE:LINE]: the line, else 0 */
	unsigned long device;    /* mem.gpu[] only */
	int exact;               /* pattern is a literal name (default report), not a glob */
	struct cmp_threshold th;
	char th_text[64];        /* threshold as given, for the table */
};

/* 0, or -1 with a one-line message in err. */
int cmp_expr_parse(const char *text, enum cmp_level level, struct cmp_expr *e, char *err,
		   size_t errlen);

enum cmp_status {
	CMP_S_OK = 1,
	CMP_S_WARN,
	CMP_S_FAIL,
	CMP_S_NOISE,             /* would fire, but the delta is within sampling noise */
	CMP_S_MISSING,           /* in the baseline, absent from the current run */
	CMP_S_NEW,               /* matched only in the current run: shown, never gated */
	CMP_S_NA,                /* could not be measured in the current run */
};

enum cmp_noise {
	CMP_N_EXACT = 1,         /* counts (CUDA instances, API calls, bytes) */
	CMP_N_SAMPLED,           /* sigma is the Poisson sampling error of the delta */
	CMP_N_SINGLE,            /* a single measurement per run: no estimate */
};

struct cmp_row {
	char *name;              /* "func[heavy].self" (owned) */
	const struct cmp_expr *expr;
	int has_base, has_cur;
	double base, cur;        /* in the metric's unit (ns, count, bytes, ratio) */
	enum cmp_noise noise;
	double sigma;            /* of cur - base, CMP_N_SAMPLED only */
	enum cmp_status status;
	char note[256];          /* why n/a, or empty */
};

struct cmp_result {
	struct cmp_row *rows;
	size_t nrows, cap;
	unsigned counts[CMP_S_NA + 1];
	int config_error;        /* a gate names something the baseline lacks */
	int unmeasurable;        /* a --fail gate was n/a */
	int nomem;               /* memory ran short: the result is incomplete */
	int defaults;            /* no expressions given: the default report */
	const char *base_path, *cur_path;
	char base_cmd[256], cur_cmd[256];
	/* Always written to --bench-json, gated or not. */
	int has_wall, has_cpu;
	double wall, cpu, cpu_sigma;   /* current run; cpu_sigma: its own sampling error */
};

/* The exit status a result stands for: 2 config error > 1 regression >
 * 3 a --fail gate could not be measured > 0. */
int cmp_result_status(const struct cmp_result *r);

/* Writers (cmp_output.c). */
void cmp_print_table(FILE *out, const struct cmp_result *r, int quiet);
void cmp_summary_line(const struct cmp_result *r, char *buf, size_t len);
int cmp_write_markdown(const char *path, const struct cmp_result *r, char *err, size_t errlen);
int cmp_write_bench_json(const char *path, const struct cmp_result *r, char *err,
			 size_t errlen);
/* "225.2 ms", "3 calls", "1.5 MiB" */
void cmp_format_value(char *buf, size_t len, enum cmp_unit unit, double v);

#endif
