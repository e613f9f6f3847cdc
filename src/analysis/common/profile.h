/*
 * profile.h — the in-memory model of a session after it has been read and
 * symbolized: what every table, exporter and comparison works from.
 * Built by prof_load() (analysis/load/load.c); read-only afterwards.  All strings and
 * arrays are owned by the profile and freed by prof_free().  Launcher side only.
 */
#ifndef CBN_PROFILE_H
#define CBN_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "../../format/cbn_format.h"

#define PROF_NONE UINT32_MAX

/* A function: the unit of a cProfile row.  Two frames are the same function
 * when name, file and line (the function's first line) and module agree. */
struct prof_func {
	const char *name;        /* demangled; "libfoo.so.1.2+0x1a00" for code without a
	                          * symbol (PROF_FUNC_NOSYM); "[libfoo.so+0x1a2b]" when
	                          * nothing better */
	const char *file;        /* source file of the definition, "" when unknown */
	uint32_t line;           /* DW_AT_decl_line, 0 when unknown */
	const char *module;      /* the ELF module's file name (symlinks resolved), "" unknown */
	uint32_t flags;          /* PROF_FUNC_* */
	uint64_t calls;          /* PROF_FUNC_COUNTED: exact calls (--calls), and of them */
	uint64_t primitive;      /* those not nested in a call of the same function */
	const char *label;       /* a builtin counted by --calls: cProfile's name for it
	                          * ("{built-in method builtins.len}"), else NULL */
};

/* prof_func.flags */
#define PROF_FUNC_NOSYM 0x1      /* no symbol: grouped by the unwind tables' function start */
#define PROF_FUNC_INLINED 0x2    /* appears as an inlined frame in some stack */
#define PROF_FUNC_PYTHON 0x4     /* a Python function: name is its qualified name, file its
				  * co_filename, line its first line (module "") */
#define PROF_FUNC_JIT 0x8        /* code generated at run time (module "jit"): named by the
				  * process's perf map, else "[jit] 0xSTART" of its region */
#define PROF_FUNC_COUNTED 0x20   /* calls and primitive are exact counts (Python and the
				  * builtins it called, --calls) */
#define PROF_FUNC_JIT_ANON 0x10  /* with JIT: a region the program named nowhere, one
				  * function per region ("[jit] 0xSTART") */
#define PROF_FUNC_BUILTIN 0x40   /* a builtin Python code called, counted (--calls): its
				  * frames stay in the Python view, which folds the rest
				  * of the interpreter into the calling line */
#define PROF_FUNC_UNSEEN 0x80    /* "[too short to sample]": a thread's CPU that no sample
				  * saw (CBN_SAMPLE_UNSEEN), under its start routine */

/* One symbolized frame; an inlined call produces several frames for one pc. */
struct prof_frame {
	uint32_t func;           /* index into prof.funcs */
	uint32_t line;           /* source line executing in this frame, 0 unknown */
	const char *file;        /* file of that line ("" unknown) */
	uint32_t inlined;        /* 1 if this frame was inlined into its caller */
	uint64_t addr;           /* the runtime pc the frame came from */
};

/* A call stack, leaf first: prof.frames[first .. first + nframes). */
struct prof_stack {
	uint32_t first;
	uint32_t nframes;
	uint32_t unwind;         /* PROF_UNWIND_*: how its native frames were found past
				  * code without unwind information, 0 all by CFI */
};

/* prof_stack.unwind, from the agent's CBN_UWM marker words (docs/symbols.md,
 * "Code without unwind information"): some caller was found by frame pointer
 * (FP), some by scanning the stack (SCAN: the callers from there on are a
 * guess), and whether the unwinding stopped early, and why
 * (PROF_UNWIND_STOP: enum prof_unwind_cause). */
#define PROF_UNWIND_FP 0x1
#define PROF_UNWIND_SCAN 0x2
#define PROF_UNWIND_STOP(u) (((u) >> 4) & 0xfu)
#define PROF_UNWIND_STOP_SET(cause) ((uint32_t)(cause) << 4)
enum prof_unwind_cause {
	PROF_UNWIND_NONE = 0,     /* did not stop early */
	PROF_UNWIND_JIT = 1,      /* in JIT code (a pc in no module) */
	PROF_UNWIND_NOCFI = 2,    /* in a module's code without CFI */
	PROF_UNWIND_SCANLIMIT = 3, /* elsewhere: no return address within the scan window */
};

struct prof_sample {
	uint64_t ts;             /* CLOCK_MONOTONIC ns */
	uint32_t stack;          /* index into prof.stacks */
	uint32_t thread;         /* index into prof.threads */
	uint32_t weight;         /* timer periods this sample stands for */
	uint32_t flags;          /* CBN_SAMPLE_*, PROF_SAMPLE_* */
};

/* prof_sample.flags: the kernel's share of the sample record before it (its
 * kweight): the same stack under a "[kernel]" leaf, or under the named kernel
 * frames ("[kernel] vfs_read", module "kernel") of one of the kernel stacks
 * the agent sampled meanwhile.  Not a record of its own. */
#define PROF_SAMPLE_KERNEL 0x100 /* the kernel's time: split off a record, or a whole
				  * record whose time was all the kernel's */
#define PROF_SAMPLE_SPLIT 0x400  /* a share split off a record (its kernel part, set
				  * with PROF_SAMPLE_KERNEL): not a record of its own,
				  * so record counts skip it */
#define PROF_SAMPLE_PY_WHOLE 0x800 /* with CBN_SAMPLE_TRUNCATED: its Python chain was read to
				   * its end, so only native frames under the outermost
				   * Python one are missing (the interpreter's start-up) */
#define PROF_SAMPLE_SPIN 0x200   /* the leaf pc lies in a spin loop (a PAUSE instruction
				  * shortly before it in the same code): set by the
				  * loader from the module's bytes (docs/waiting.md) */

struct prof_thread {
	uint32_t tid;
	uint32_t process;        /* index into prof.processes */
	const char *name;        /* last name seen, "" if none */
	uint64_t start, end;     /* 0 when unknown */
	uint64_t cpu_ns;         /* from THREAD_END when present, else 0 */
	uint64_t weight;         /* sum of sample weights */
	uint64_t overhead_weight; /* of its samples in the profiler's code (in no table) */
};

struct prof_process {
	uint32_t pid, ppid, exec_seq;
	const char *exe;
	const char *cmdline;     /* argv joined with spaces */
	const char *file;        /* the .cbp it came from */
	uint64_t start, end;     /* CLOCK_MONOTONIC ns */
	uint64_t period_ns;
	uint32_t signo, timer_kind, max_depth;
	int clean_exit;          /* exit handlers ran */
	int exited;              /* it ended by exit() or _exit(): exit_code is its status */
	int exit_code;           /* valid when exited */
	int forked;              /* a fork child's first image: main ran in its parent */
	uint32_t exec_unprofiled; /* execs into an image that could not be profiled
				   * (named in prof.warnings) */
	const char *disabled;    /* NULL, or why the agent disabled itself */
	uint64_t samples;        /* sample records */
	uint64_t weight;         /* sum of sample weights (the program's: not overhead) */
	/* The profiler's own cost in this process, apart from the program's:
	 * samples whose innermost attributable frame is cbottleneck's (hooks,
	 * CUDA callbacks, helper threads; load_stack_ours), in no table; and the
	 * header's cbn_overhead (0 in older files). */
	uint64_t overhead_weight, overhead_samples;
	uint64_t overhead_threads_ns;  /* CPU of the agent's helper threads */
	uint64_t overhead_site_ns[CBN_OVH_NSITES];
	uint64_t overhead_site_calls[CBN_OVH_NSITES];
	uint64_t overhead_init_ns;     /* the agent's start-up */
	/* Its start before the agent could sample it (0 in older files and
	 * in fork children): the header's main-thread clocks at the agent's
	 * start and at this image's exec, and what the loader made of them:
	 * the CPU this image spent from its exec (or the process's start) to
	 * the agent's start, the dynamic loader's mapping and relocation. */
	uint64_t start_cpu_ns, exec_cpu_ns;
	uint64_t before_agent_ns;
	uint64_t lost[CBN_LOST_NREASONS];
	uint64_t truncated, pc_only;
	int damaged;             /* the file was truncated or corrupt; see prof.warnings */
	uint64_t start_real_ns;  /* start as CLOCK_REALTIME ns (epoch), 0 when unknown */
	/* how the agent sampled (0 in files of the first release) */
	uint32_t threads_perf;   /* threads sampled with perf events */
	uint32_t threads_timer;  /* threads sampled with POSIX CPU timers */
	uint32_t signo_first;    /* sampling signal at start (signo: at the end) */
	uint32_t notes;          /* CBN_NOTE_* */
	int perf_errno;          /* why perf events were not used, 0 */
	const char *timer_reason; /* "" when every thread had perf events */
	/* kernel stacks (0 / "" in older files) */
	uint32_t kstack_state;   /* enum cbn_kstack_state */
	int kstack_errno;        /* why they were refused, 0 */
	uint32_t threads_kstacks; /* threads that had the kernel event */
	uint64_t kstack_samples, kstack_lost;
	uint64_t kstack_placed;   /* of kstack_samples: on the user stack that entered the kernel */
	uint64_t kstack_unplaced; /* of kstack_samples: on the next sample's stack */
	uint32_t kstack_parks;    /* events closed on threads staying in user mode */
	uint32_t kstack_unparks;  /* ... and opened again */
	const char *kstack_reason; /* why there are none, "" */
	/* the unwinder's self-check (header.unwind_check; zero without it) */
	struct prof_unwind_check {
		uint64_t samples, frames, differed, cfi_checked, cfi_differed;
		uint64_t fast;            /* of samples: walked by the agent's own walk */
		int first;                /* 1: first_* say where one differed */
		uint32_t first_at;
		uint64_t first_cached_pc, first_full_pc;
	} ucheck;
	uint64_t pc_only_why[CBN_PCONLY_NREASONS];
	uint32_t unsampled_why[CBN_UNSAMPLED_NREASONS];

	/* host memory (header.mem; state CBN_MEM_OFF when not recorded) */
	struct prof_mem_proc {
		uint32_t state;          /* enum cbn_mem_state_kind */
		uint32_t flags;          /* CBN_MEMF_* */
		uint64_t rate;           /* mean bytes between samples, 1 = every allocation */
		uint64_t host_peak, host_peak_ts, rss_peak;
		uint64_t reserved_peak;  /* address space reserved with PROT_NONE mappings,
					  * the most at once (not in host_peak; 0 older) */
		uint64_t allocs, frees, alloc_bytes;
		uint64_t sampled, lost, untracked, no_stack;
		int64_t host_live_end;   /* host_live when the file was last written */
		const char *reason;      /* why REFUSED, "" */
	} mem;

	/* ring mode (--ring; 0 without it): samples older than ring_ns before the
	 * end are dropped (ring_dropped of them), and ring_recycled chunks were
	 * reused by the agent (what they held is gone) */
	uint64_t ring_ns, ring_recycled, ring_dropped;

	/* the off-CPU sampler (header.offcpu; state CBN_OFFCPU_OFF without it) */
	struct prof_offcpu_proc {
		uint32_t state;          /* enum cbn_offcpu_state_kind */
		uint32_t rate_hz;
		uint64_t ticks, looks, records, unconfirmed, no_stack, lost, late_ns;
		const char *reason;      /* why REFUSED, "" */
	} offcpu;

	/* distributed runs (header.rank; rank -1 when the process is not a rank) */
	struct prof_rank_proc {
		int32_t rank;            /* world rank, -1 not a rank */
		int32_t local_rank;      /* -1 unknown */
		int32_t world_size;      /* 0 unknown */
		uint32_t source;         /* enum cbn_rank_source */
		const char *host;        /* "" unknown */
		uint32_t mpi;            /* enum cbn_mpi_state_kind */
		uint32_t mpi_impl;       /* enum cbn_mpi_impl */
		const char *mpi_version; /* "" */
		uint64_t mpi_calls, mpi_lost;
		/* Clock alignment (load_mpi.c): this process's CLOCK_MONOTONIC
		 * time t reads as t + offset(t) on the reference clock (the lowest
		 * rank's), offset(t) = clock_offset0 at clock_t0 and clock_offset1
		 * at clock_t1, linear between and constant outside.  The loader
		 * leaves every timestamp of the profile on the process's own clock;
		 * views that put ranks on one timeline call prof_rank_time(). */
		uint32_t clock_source;   /* enum prof_clock_source */
		uint64_t clock_t0, clock_t1;
		int64_t clock_offset0, clock_offset1;
		uint64_t clock_uncertainty; /* ns (the best ping-pong's rtt / 2), 0 when
					     * exact (same host), UINT64_MAX unknown */
	} rank;

	/* the Python interpreter (header.python; state CBN_PY_NONE without one) */
	struct prof_python_proc {
		uint32_t state;          /* enum cbn_python_kind */
		uint32_t version;        /* PY_VERSION_HEX, 0 unknown */
		uint64_t module_base;    /* the interpreter module's load bias */
		uint64_t stacks, frames, truncated;
		uint64_t unread[CBN_PYU_NREASONS];
		uint32_t codes, codes_gone, table_full;
		uint64_t codes_missing;  /* Python frames whose code record is not in the file */
		const char *reason;      /* why REFUSED or OFF, "" */
		/* exact call counts (--calls, PY_CALLS records): enum
		 * cbn_py_calls_state (0: not asked), CBN_PYCALLS_* flags,
		 * functions counted, entries naming no code record */
		uint32_t calls_state, calls_flags;
		uint64_t calls_funcs, calls_unnamed;
		uint64_t calls, primitive;   /* all counted, named or not */
	} python;

	/* unwinding past code without unwind information (the CBN_UWM markers
	 * of its samples' stacks, docs/symbols.md): sample records and their
	 * weights whose stack went on by frame pointer only (fp), with a frame
	 * found by scanning the stack (scan), or stopped early (stop: by place
	 * and cause in prof.unwind_stops); its JIT code (JIT_REGION records) and
	 * the entries of the perf map that names it */
	struct prof_unwind_proc {
		uint64_t fp_samples, fp_weight;
		uint64_t scan_samples, scan_weight;
		uint64_t stop_samples, stop_weight;
		uint32_t jit_regions;    /* executable regions outside every module */
		uint32_t jitdumps;       /* jitdump files it mapped */
		uint64_t perfmap_entries; /* named ranges of the session's perf-PID.map, 0 none */
	} unwind;

	/* capture controls (header.capture; mode CBN_CAPTURE_ALL without them) */
	struct prof_capture_proc {
		uint32_t mode;           /* enum cbn_capture_mode */
		uint32_t windows;        /* windows opened */
		uint64_t steps;          /* cbn_step() calls, recorded or not */
		uint64_t active_ns;      /* time inside windows (closed ones; the loader
					  * adds one still open at the end) */
		const char *spec;        /* the controls ("" without them) */
	} capture;
};

/* A module (executable, shared object, vdso) one process image mapped: one
 * per MODULE_LOAD record, whether or not a sample landed in it. */
struct prof_module {
	uint32_t process;        /* index into prof.processes */
	const char *path;        /* as the agent recorded it */
	const char *name;        /* basename of path */
	uint64_t base;           /* load bias */
	uint64_t load_ts;        /* CLOCK_MONOTONIC ns */
	uint64_t unload_ts;      /* 0 = still loaded when the process ended */
	int has_debuginfo;       /* 1 DWARF found, 0 none, -1 not looked up (no frame
	                          * landed in it: the loader opens only modules it
	                          * symbolizes) */
};

/* Where the unwinding of a process's samples stopped early (a CBN_UWM STOP
 * marker): one per (process, place, cause). */
struct prof_unwind_stop {
	uint32_t process;        /* index into prof.processes */
	uint32_t cause;          /* enum prof_unwind_cause */
	const char *place;       /* the module's file name, "[jit] 0xSTART" (a JIT region),
				  * "[unknown]" (a pc in no module or region) */
	uint64_t samples, weight; /* sample records and their weights */
};

/* --- CUDA side (empty arrays when the run had none) -------------------------- */

struct prof_range {           /* annotation / NVTX range or mark */
	uint64_t start, end;
	uint32_t thread;          /* index into prof.threads, PROF_NONE if unknown */
	uint32_t process;
	uint32_t kind;            /* enum cbn_range_kind */
	uint32_t source;          /* enum cbn_range_source */
	uint32_t depth;
	const char *domain;       /* "" for the default domain */
	const char *name;
};

/* A capture window of one process (CAPTURE OPEN..CLOSE records), by
 * (process, start).  A window still open when the file ends closes at the
 * process's end (cause CBN_CAUSE_EXIT).  With mode CBN_CAPTURE_ALL the loader
 * makes one window per process, from its start to its end, cause START. */
struct prof_window {
	uint64_t start, end;
	uint32_t process;
	uint32_t open_cause, close_cause; /* enum cbn_capture_cause */
	uint64_t first_step;      /* the step in progress when it opened: cbn_step()
				   * calls by then (the one that opened it included),
				   * torch's ProfilerStep#N (cbn_schedule.h) */
};

/* A `cbottleneck ctl PID mark NAME` instant. */
struct prof_ctl_mark {
	uint64_t ts;
	uint32_t process;
	const char *name;
};

struct prof_cuda_api {
	uint64_t start, end;
	uint32_t thread;          /* index into prof.threads, PROF_NONE if unknown */
	uint32_t process;
	uint32_t correlation;
	uint32_t cbid;
	uint32_t domain;          /* enum cbn_cuda_domain */
	int32_t ret;
	const char *name;         /* "cudaLaunchKernel", "cuMemcpyHtoD", ... */
	uint32_t stack;           /* host stack (index into prof.stacks), PROF_NONE if none */
};

enum prof_gpu_kind { PROF_GPU_KERNEL = 1, PROF_GPU_MEMCPY = 2, PROF_GPU_MEMSET = 3 };

struct prof_gpu_op {
	uint32_t kind;            /* enum prof_gpu_kind */
	uint32_t process;
	uint64_t start, end;
	uint32_t device, context, stream, correlation;
	const char *name;         /* kernel: demangled name; copies: "[CUDA memcpy HtoD]" etc. */
	uint32_t api;             /* index into prof.cuda_api of the launching call, PROF_NONE */
	/* kernels */
	int32_t grid[3], block[3];
	uint32_t registers;
	int32_t static_smem, dynamic_smem;
	uint32_t shmem_limit_optin;
	uint32_t graph_id;
	uint64_t graph_node_id;
	/* copies and sets */
	uint64_t bytes;
	uint32_t copy_kind, src_kind, dst_kind;   /* enum cbn_copy_kind / cbn_mem_kind */
	uint32_t async;
	uint32_t value;           /* memset */
};

struct prof_cuda_sync {
	uint64_t start, end;
	uint32_t process, type, correlation, context, stream;
};

struct prof_cuda_overhead {
	uint64_t start, end;
	uint32_t process, kind, correlation;
};

struct prof_cuda_device {
	uint32_t process;
	uint32_t id;
	const char *name;
	uint64_t global_mem;
	uint32_t sm_count, cc_major, cc_minor;
	uint32_t max_threads_per_block, max_warps_per_sm, threads_per_warp, max_blocks_per_sm;
	uint32_t regs_per_sm, regs_per_block, smem_per_sm, smem_per_block;
	uint32_t smem_per_block_optin, reserved_smem_per_block;
	int has_uuid;              /* uuid holds the device's UUID (0 in older files) */
	uint8_t uuid[16];
};

struct prof_cuda_context {
	uint32_t process, context, device, null_stream, sm_count;
};

struct prof_cuda_memory {
	uint64_t ts, address, bytes;
	uint32_t process, device, context, stream, correlation, mem_kind;
	int alloc;                /* 1 allocation, 0 release */
	/* cbn_rec_cuda_memory_ext (0 in older files) */
	uint64_t pool_address, pool_release_threshold, pool_utilized, pc;
	uint32_t is_async, pool_type;
	uint64_t pool_size;       /* ext.pool_size (LOCAL pools), 0 */
	uint32_t api;             /* index into prof.cuda_api by correlation, PROF_NONE */
};

/* CUPTI MEMORY_POOL (cbn_rec_cuda_mempool) */
struct prof_cuda_mempool {
	uint64_t ts, address, size, utilized, release_threshold, min_bytes_to_keep;
	uint32_t process, device, correlation, op, pool_type, managed;
};

/* A sampled host allocation (cbn_rec_mem_alloc); by ts within a process. */
struct prof_mem_alloc {
	uint64_t ts, addr, size;
	uint32_t process;
	uint32_t thread;          /* index into prof.threads, PROF_NONE if unknown */
	uint32_t stack;           /* prof.stacks index (return addresses: symbolized at pc-1),
				   * PROF_NONE when recorded without one */
	uint32_t kind, fn;        /* enum cbn_alloc_kind, cbn_alloc_fn */
};

/* The release of a sampled block (cbn_rec_mem_free). */
struct prof_mem_free {
	uint64_t ts, addr, size;
	uint32_t process, thread, kind, fn;
};

/* cbn_rec_mem_counters */
struct prof_mem_counter {
	uint64_t ts, rss, brk, allocs, frees, alloc_bytes;
	int64_t host_live, mmap_live;
	uint32_t process;
};

/* A stretch of off-CPU time of one thread (cbn_rec_offcpu). */
struct prof_offcpu {
	uint64_t start, end;      /* CLOCK_MONOTONIC ns */
	uint64_t weight_ns;       /* off-CPU (or, RUNQ, runnable) time it stands for */
	uint64_t addr;            /* futex word / fd argument, 0 */
	uint32_t process;
	uint32_t thread;          /* index into prof.threads */
	uint32_t stack;           /* prof.stacks index (pc[0] symbolized as is, the others
				   * at pc-1, as a sample's), PROF_NONE without one */
	uint32_t kind;            /* enum cbn_offcpu_kind */
	int32_t syscall;          /* number, -1 outside one, -2 RUNQ */
	uint32_t owner_thread;    /* index into prof.threads of the tid read at addr + 8
				   * when that tid is a thread of the same process,
				   * PROF_NONE otherwise (the report uses it only for
				   * waits in a mutex lock) */
	uint32_t flags;           /* CBN_OFFCPU_* */
};

/* How a rank's clock was put on the reference clock (prof_process.rank). */
enum prof_clock_source {
	PROF_CLOCK_NONE = 0,      /* not a rank, or the only one */
	PROF_CLOCK_SAME_HOST = 1, /* same host as the reference: one CLOCK_MONOTONIC, exact */
	PROF_CLOCK_MPI = 2,       /* ping-pongs at MPI_Init and MPI_Finalize (CLOCK records) */
	PROF_CLOCK_REALTIME = 3,  /* CLOCK_REALTIME at start on both hosts (NTP's accuracy) */
};

/* One MPI call (CBN_REC_MPI), sorted by (process, start). */
struct prof_mpi_call {
	uint64_t start, end;      /* CLOCK_MONOTONIC ns of its process */
	uint64_t bytes_sent, bytes_recv;
	uint32_t process;
	uint32_t thread;          /* index into prof.threads */
	uint32_t stack;           /* prof.stacks index of the call site (return addresses,
				   * symbolized at pc-1), PROF_NONE without one */
	uint16_t call;            /* enum cbn_mpi_call (cbn_mpi.h) */
	uint16_t flags;           /* CBN_MPI_F_* */
	int32_t peer, tag;
	uint32_t comm;
	int32_t comm_size;
	uint32_t seq, count;
};

struct prof_cuda_status {     /* one per process that loaded the CUDA layer */
	uint32_t process;
	uint32_t state;           /* enum cbn_cuda_state */
	int32_t cupti_error;
	uint32_t cupti_version;
	uint32_t driver_version;   /* cuDriverGetVersion (13000 = 13.0), 0 unknown */
	uint32_t flush_timed_out;
	uint64_t dropped, zero_ts, buffers, records;
	const char *message;
	const char *note;          /* what the layer noted when it started, "" */
};

/* A span of a process's run in which the program's own CUPTI client (its own
 * profiler: torch.profiler, a linked tool) held part of CUPTI and the CUDA
 * layer had stepped aside (CUDA_STATUS YIELDED .. RESUMED). */
struct prof_cuda_share {
	uint32_t process;
	uint32_t what;             /* CBN_CUPTI_API (callbacks) or CBN_CUPTI_ACTIVITY */
	uint64_t start, end;       /* end 0: until the process ended */
	const char *holder;        /* the client: its subscriber name or its module */
	const char *note;          /* what the layer said when it took over again, "" */
};

struct profile {
	/* what was run */
	char **argv;              /* command line as given to the launcher (NULL-terminated) */
	int exit_status;          /* launcher's view: exit code, or -1 if killed */
	int exit_signal;          /* signal that killed the target, 0 if none */
	uint32_t attached_pid;    /* `--pid`: the process attached to, 0 for a launched run
				   * (no exit status, start-up not seen: docs/attach.md) */
	uint64_t wall_ns;         /* launch to last process end */
	uint64_t start_ns;        /* earliest process start (CLOCK_MONOTONIC) */
	uint64_t start_real_ns;   /* the same process's start_real_ns (epoch ns), 0 unknown */
	uint64_t period_ns;       /* sampling period of the root process */
	double frequency_hz;
	uint64_t user_ns, sys_ns; /* CPU the kernel counted, user and system, for the whole
	                           * tree (the launcher's wait4); 0 and 0 when unknown */
	uint64_t launcher_ns;     /* the launcher's own CPU during the run (session.json) */

	struct prof_func *funcs;           size_t nfuncs;
	struct prof_frame *frames;         size_t nframes;
	struct prof_stack *stacks;         size_t nstacks;
	struct prof_sample *samples;       size_t nsamples;
	struct prof_thread *threads;       size_t nthreads;
	struct prof_process *processes;    size_t nprocesses;
	/* every module of every process, by process, then in load order */
	struct prof_module *modules;       size_t nmodules;

	struct prof_range *ranges;         size_t nranges;
	struct prof_window *windows;       size_t nwindows;
	struct prof_ctl_mark *ctl_marks;   size_t nctl_marks;
	struct prof_cuda_api *cuda_api;    size_t ncuda_api;
	struct prof_gpu_op *gpu_ops;       size_t ngpu_ops;
	struct prof_cuda_sync *syncs;      size_t nsyncs;
	struct prof_cuda_overhead *overheads; size_t noverheads;
	struct prof_cuda_device *devices;  size_t ndevices;   /* per process that saw them */
	struct prof_cuda_context *contexts; size_t ncontexts;
	struct prof_cuda_memory *memory;   size_t nmemory;
	struct prof_cuda_mempool *mempools; size_t nmempools;
	/* host memory (--memory), each array sorted by (process, ts) */
	struct prof_mem_alloc *mem_allocs; size_t nmem_allocs;
	struct prof_mem_free *mem_frees;   size_t nmem_frees;
	struct prof_mem_counter *mem_counters; size_t nmem_counters;
	struct prof_cuda_status *cuda_status; size_t ncuda_status;
	struct prof_cuda_share *cuda_shares;  size_t ncuda_shares;
	/* off-CPU stretches (--off-cpu), sorted by (process, start) */
	struct prof_offcpu *offcpu;        size_t noffcpu;
	/* MPI calls (libcbottleneck_mpi.so), sorted by (process, start) */
	struct prof_mpi_call *mpi_calls;   size_t nmpi_calls;
	/* where unwinding stopped early, by process, then weight descending */
	struct prof_unwind_stop *unwind_stops; size_t nunwind_stops;

	/* what went wrong while reading (one line each), for the report footer */
	char **warnings;                   size_t nwarnings;
	/* children of fork that ended without exit handlers while their parent
	 * lived on: the _exit a forked child is meant to make, not a problem
	 * (load_finish.c; the header says so with -v) */
	uint32_t fork_exits;
	/* the processes' CPU before the agent could sample them (the dynamic
	 * loader's work, in no table), and how many had some */
	uint64_t before_agent_ns;
	uint32_t before_agent_procs;
	/* modules without debug info (file names), for the "install -dbgsym" hint */
	char **nodebug_modules;            size_t nnodebug_modules;
	/* every module a frame landed in, once each (symbolizer's view) */
	struct prof_hitmod {
		const char *file;           /* file name on disk, symlinks resolved */
		const char *soname;         /* DT_SONAME, "" when none */
		const char *path;           /* as the agent recorded it */
		int has_debuginfo;
		const char *producer;       /* compiler and flags (sym_module_producer), "" */
	} *hitmods;                        size_t nhitmods;

	/* the environment summary (session.json; found 0 for older sessions) */
	struct prof_env {
		int found;
		const char *kernel, *cpu_model, *governor, *libc, *libunwind, *elfutils;
		int cpus;
		double load[3];                 /* -1 unknown */
		const char *producer;           /* the program's compiler and flags, "" unknown */
		int program_debuginfo;          /* the program's executable has DWARF */
	} env;

	int python_view;                   /* --python: 0 on, 1 native (the interpreter's own
	                                    * frames kept), 2 off (native frames only):
	                                    * enum prof_python */
	int inline_folded;                 /* 1: inlined frames were folded into their
	                                    * containing functions (--inline fold) */

	void *arena;                       /* owner of the strings above */
	char *rank_filter;                 /* the --ranks LIST it was loaded with, NULL: all */
};

/* The one rule for a thread's sampling period in ns, used by every figure and
 * every writer: its process's period, else the run's, else 1e9 / frequency.
 * 0 only when none of them is known. */
static inline uint64_t prof_period_of_thread(const struct profile *p, uint32_t t)
{
	uint64_t period = 0;

	if (t < p->nthreads && p->threads[t].process < p->nprocesses)
		period = p->processes[p->threads[t].process].period_ns;
	if (!period)
		period = p->period_ns;
	if (!period && p->frequency_hz > 0)
		period = (uint64_t)(1e9 / p->frequency_hz + 0.5);
	return period;
}

/* A timestamp t of process proc on the reference clock of a distributed run
 * (prof_process.rank): t itself for a process that is not a rank. */
static inline uint64_t prof_rank_time(const struct profile *p, uint32_t proc, uint64_t t)
{
	const struct prof_rank_proc *r;
	int64_t off;

	if (proc >= p->nprocesses)
		return t;
	r = &p->processes[proc].rank;
	if (r->clock_source == PROF_CLOCK_NONE || r->clock_source == PROF_CLOCK_SAME_HOST)
		return t;
	if (r->clock_t1 <= r->clock_t0 || t <= r->clock_t0)
		off = r->clock_offset0;
	else if (t >= r->clock_t1)
		off = r->clock_offset1;
	else
		off = r->clock_offset0 + (int64_t)((double)(r->clock_offset1 - r->clock_offset0) *
						   (double)(t - r->clock_t0) /
						   (double)(r->clock_t1 - r->clock_t0));
	return (uint64_t)((int64_t)t + off);
}

/* The same rule for a process. */
static inline uint64_t prof_period_of_process(const struct profile *p, uint32_t proc)
{
	uint64_t period = proc < p->nprocesses ? p->processes[proc].period_ns : 0;

	if (!period)
		period = p->period_ns;
	if (!period && p->frequency_hz > 0)
		period = (uint64_t)(1e9 / p->frequency_hz + 0.5);
	return period;
}

#endif
