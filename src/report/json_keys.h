/*
 * json_keys.h — the names of the JSON report's keys that are read back: the
 * writers (json.c, cuda_json.c, mem_json.c, steps_json.c, wait_json.c,
 * dist_json.c) write them and the regression gate
 * (gate/gate_json.c) reads them, both through these macros, so a key has one
 * spelling.  Keys are public API (docs/report.schema.json): add, never rename.
 */
#ifndef CBN_JSON_KEYS_H
#define CBN_JSON_KEYS_H

#define JK_SCHEMA_VERSION "schema_version"
#define JK_SCHEMA_VERSION_VALUE 5
/* the oldest schema the gate still reads: 2 only added "memory", 3 only
 * added "steps", 4 only "waiting" */
#define JK_SCHEMA_VERSION_OLDEST 1

/* top level */
#define JK_RUN "run"
#define JK_FUNCTIONS "functions"
#define JK_LINES "lines"
#define JK_CUDA "cuda"
#define JK_MEMORY "memory"
#define JK_STEPS "steps"
#define JK_WAITING "waiting"
#define JK_OPERATORS "operators"

/* run */
#define JK_COMMAND "command"
#define JK_WALL_NS "wall_ns"
#define JK_CPU_NS "cpu_ns"
#define JK_PERIOD_NS "period_ns"
#define JK_SAMPLES "samples"
#define JK_WEIGHT "weight"

/* processes[] (json.c); JK_PID is every row's process id: processes[],
 * threads[], memory.spaces[], cuda.status[] and .shared[], distributed.ranks[] */
#define JK_PROCESSES "processes"
#define JK_PID "pid"

/* functions[] and lines[] */
#define JK_NAME "name"
#define JK_FILE "file"
#define JK_LINE "line"
#define JK_SELF_NS "self_ns"
#define JK_TOTAL_NS "total_ns"
#define JK_SELF_SAMPLES "self_samples"
#define JK_TOTAL_SAMPLES "total_samples"

/* operators.rows[] (name, self_samples, total_samples as in functions[]) */
#define JK_OP_ROWS "rows"
#define JK_OP_SELF_CPU_NS "self_cpu_ns"
#define JK_OP_CPU_TOTAL_NS "cpu_total_ns"
#define JK_OP_SELF_CUDA_NS "self_cuda_ns"
#define JK_OP_CUDA_TOTAL_NS "cuda_total_ns"
#define JK_OP_LAUNCHES "launches"

/* cuda.ops[] memory columns (present when memory was recorded): net bytes */
#define JK_CPU_MEM "cpu_mem"
#define JK_SELF_CPU_MEM "self_cpu_mem"
#define JK_CUDA_MEM "cuda_mem"
#define JK_SELF_CUDA_MEM "self_cuda_mem"

/* cuda.status[]; the states the gate tells apart (analysis/cuda/cuda_status.c
 * names them) */
#define JK_STATUS "status"
#define JK_STATE "state"
#define JK_MESSAGE "message"
#define JK_STATE_UNAVAILABLE "unavailable"
#define JK_STATE_STARTED "started"
#define JK_STATE_FINISHED "finished"

/* cuda.totals */
#define JK_TOTALS "totals"
#define JK_KERNELS "kernels"
#define JK_KERNEL_NS "kernel_ns"
#define JK_MEMCPY "memcpy"
#define JK_MEMCPY_NS "memcpy_ns"
#define JK_MEMCPY_BYTES "memcpy_bytes"
#define JK_API_CALLS "api_calls"
#define JK_SYNC_NS "sync_ns"
#define JK_GPU_BUSY_NS "gpu_busy_ns"

/* cuda.overview */
#define JK_OVERVIEW "overview"
#define JK_GPU_UTILIZATION "gpu_utilization"

/* cuda.kernels[] (name, total_ns) and cuda.api[] (name, total_ns) */
#define JK_INSTANCES "instances"
#define JK_API "api"
#define JK_CALLS "calls"

/* memory (mem_json.c): rate; spaces[] (kind, device, peak_bytes, peak_exact,
 * live_end_bytes, allocs); sites[] (kind, device, function, file, line, bytes,
 * allocs, live_end_bytes); leaks[] (site, bytes) */
#define JK_MEM_RATE "rate"
#define JK_MEM_SPACES "spaces"
#define JK_MEM_SITES "sites"
#define JK_MEM_LEAKS "leaks"
#define JK_MEM_KIND "kind"
#define JK_MEM_DEVICE "device"
#define JK_MEM_PEAK_BYTES "peak_bytes"
#define JK_MEM_PEAK_EXACT "peak_exact"
#define JK_MEM_LIVE_END_BYTES "live_end_bytes"
#define JK_MEM_ALLOCS "allocs"
#define JK_MEM_BYTES "bytes"
#define JK_MEM_SITE "site"
#define JK_MEM_FUNCTION "function"
/* memory.spaces[].kind and sites[].kind */
#define JK_MEM_KIND_GPU "gpu"
#define JK_MEM_KIND_HOST "host"

/* steps (steps_json.c): count, median_ns, p90_ns, total_ns; steps[] */
#define JK_STEP_COUNT "count"
#define JK_STEP_MEDIAN_NS "median_ns"
#define JK_STEP_P90_NS "p90_ns"

/* waiting (wait_json.c): offcpu, off_ns (all threads), efficiency; locks[]
 * (function, wait_ns): what wait.total, cpu.efficiency and lock[SITE].wait
 * read */
#define JK_WAIT_OFFCPU "offcpu"
#define JK_WAIT_OFF_NS "off_ns"
#define JK_WAIT_EFFICIENCY "efficiency"
#define JK_WAIT_LOCKS "locks"
#define JK_WAIT_FUNCTION "function"
#define JK_WAIT_WAIT_NS "wait_ns"

/* distributed (dist_json.c): mpi_ns, imbalance; ranks[] (wall_ns): what
 * dist.mpi, dist.imbalance and dist.max_wall read */
#define JK_DISTRIBUTED "distributed"
#define JK_DIST_MPI_NS "mpi_ns"
#define JK_DIST_IMBALANCE "imbalance"
#define JK_DIST_RANKS "ranks"

#endif
