/*
 * gate_run.h — what the regression gate compares: one run's figures, read
 * from a JSON report (gate_json.c, `cbottleneck compare` and --baseline) or
 * taken from the analysis result of the run just profiled (gate_run.c), so
 * both sides of a comparison have one shape.  Launcher side only.
 *
 * A figure the source lacks (a key missing from a JSON report, a GPU
 * utilization with no GPU work) is NAN: test it with gate_has().
 */
#ifndef CBN_GATE_RUN_H
#define CBN_GATE_RUN_H

#include <math.h>
#include <stddef.h>

#include "profile.h"

struct analysis;

static inline int gate_has(double v)
{
	return !isnan(v);
}

struct gate_func {
	const char *name;
	double self_ns, total_ns, self_samples, total_samples;
	double calls;            /* exact calls (--calls), NaN when not counted */
};

struct gate_line {
	const char *file;
	double line, self_ns, self_samples;
};

/* cuda.kernels[] (count: instances) and cuda.api[] (count: calls). */
struct gate_count {
	const char *name;
	double count, total_ns;
};

/* cuda.totals and cuda.overview scalars. */
struct gate_gpu {
	double kernels, kernel_ns, memcpy_bytes, memcpy_ns, memcpy, api_calls, sync_ns,
		gpu_busy_ns, gpu_utilization;
};

/* operators.rows[]: what op[PATTERN].FIELD reads; CPU fields are sampled
 * (with the sample weights behind them), CUDA fields and launches exact. */
struct gate_op {
	const char *name;
	double self_cpu_ns, cpu_total_ns, self_samples, total_samples;
	double self_cuda_ns, cuda_total_ns, launches;
};

/* memory.sites[]: what mem.site[PATTERN] sums. */
struct gate_mem_site {
	const char *function, *file;
	double line, bytes, allocs;
	int gpu;
};

/* waiting.locks[]: what lock[SITE].wait sums. */
struct gate_lock {
	const char *function;
	double wait_ns;
};

/* memory.spaces[] of kind gpu: what mem.gpu[N].peak reads. */
struct gate_mem_gpu {
	double device, peak;
};

struct gate_run {
	const char **command;    /* the program's argv; NULL entries skipped */
	size_t ncommand;
	double wall_ns, cpu_ns, samples, weight;
	double period_ns;        /* 0 when unknown, never NAN */
	struct gate_func *funcs;     size_t nfuncs;
	struct gate_line *lines;     size_t nlines;
	/* CUDA: has_cuda when the run has a CUDA part at all; then how many
	 * processes started tracing and how many could not (and the first one's
	 * message, NULL when none), and whether totals are there. */
	int has_cuda, has_totals;
	unsigned cuda_started, cuda_unavailable;
	const char *cuda_message;
	struct gate_gpu gpu;
	struct gate_count *kernels;  size_t nkernels;
	struct gate_count *api;      size_t napi;
	/* Operators: has_ops when the run has an operators object (a report
	 * of a run without operator frames, or one older than them, has none). */
	int has_ops;
	struct gate_op *ops;         size_t nops;
	/* Memory (schema 2): has_memory when the run has a memory object.
	 * mem_peak: the root process's host peak (NAN without host data);
	 * mem_leaked: bytes of the host leaks, all processes; mem_rate: the
	 * host sampling rate (1 exact, 0 none); mem_peak_exact as written. */
	int has_memory, mem_peak_exact;
	double mem_rate, mem_peak, mem_leaked;
	struct gate_mem_gpu *mem_gpus;    size_t nmem_gpus;
	struct gate_mem_site *mem_sites;  size_t nmem_sites;
	/* Steps (schema 3): has_steps when the run has a steps object; then
	 * their count and the median and 90th percentile of their durations
	 * (NAN when a key is missing). */
	int has_steps;
	double step_count, step_median, step_p90;
	/* Waiting (schema 4): has_waiting when the run has a waiting object;
	 * wait_offcpu when it was recorded with --off-cpu (wait_off_ns and the
	 * locks mean something only then); wait_efficiency the parallel
	 * efficiency (NAN when a key is missing). */
	int has_waiting, wait_offcpu;
	double wait_off_ns, wait_efficiency;
	struct gate_lock *locks;     size_t nlocks;
	/* Distributed runs: has_dist when the run has a distributed object;
	 * the longest rank wall, MPI time over the ranks, imbalance (NAN when
	 * a key is missing). */
	int has_dist;
	double dist_max_wall, dist_mpi_ns, dist_imbalance;
	void *owner;             /* the parsed JSON the strings point into, or NULL */
};

/* Read a JSON report written by report_json_write.  role ("baseline",
 * "current") goes into messages.  Returns 0, -1 with a one-line message in
 * err, or -ENOMEM. */
int gate_run_from_json(const char *path, const char *role, struct gate_run *out, char *err,
		       size_t errlen);

/* The same figures straight from the analysis result (what its JSON report
 * would hold).  Strings point into a and its profile, which must outlive out.
 * Returns 0 or -ENOMEM. */
int gate_run_from_analysis(const struct analysis *a, struct gate_run *out);

void gate_run_free(struct gate_run *r);

#endif
