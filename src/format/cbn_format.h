/*
 * cbn_format.h — the on-disk session format, the one contract between the agent
 * (which writes it from inside the target) and the launcher (which reads it).
 * Every field, record type and value here is versioned API: append, never renumber.
 *
 * A session directory holds one file per process image: "<pid>.<execseq>.cbp".
 * A file is mapped MAP_SHARED by the agent and preallocated, so a crash, _exit or
 * SIGKILL keeps everything already committed.  Layout:
 *
 *   [0, CBN_HEADER_SIZE)        struct cbn_file_header
 *   [data_offset, file_size)    chunks of chunk_size bytes, handed out by an atomic
 *                               fetch_add on header.next_chunk
 *
 * A chunk belongs to exactly one writer (one thread's samples, or the event writer
 * under its mutex).  It starts with struct cbn_chunk_header and holds records, each
 * starting with struct cbn_rec, 8-byte aligned, size a multiple of 8.  A writer fills
 * a record past chunk.used and then publishes it with a release store of chunk.used,
 * so a reader trusts [0, used) and ignores whatever lies beyond.
 *
 * All timestamps are CLOCK_MONOTONIC nanoseconds.  All integers are host-endian
 * (the reader rejects a file whose magic/endianness check fails).
 */
#ifndef CBN_FORMAT_H
#define CBN_FORMAT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define CBN_MAGIC "CBNPROF\0"   /* 8 bytes, including the NUL */
#define CBN_FORMAT_VERSION 1u
#define CBN_ENDIAN_CHECK 0x01020304u
#define CBN_HEADER_SIZE 8192u
#define CBN_CHUNK_SIZE (64u * 1024u)
#define CBN_FILE_EXT ".cbp"
/* The launcher's records for process image PID.SEQ (what it observed from
 * outside: memory counters, off-CPU stretches, capture edges it caused), in
 * the same format: PID.SEQ.cbs beside PID.SEQ.cbp.  The loader reads it as
 * part of that image. */
#define CBN_SIDE_EXT ".cbs"

#define CBN_MAX_FRAMES 256      /* hard cap on frames in one stack record */
#define CBN_NAME_MAX 16         /* thread names, as the kernel's comm */
#define CBN_BUILD_ID_MAX 20
#define CBN_MAX_SEGMENTS 8

/* Why a sample the timer asked for was not recorded.  Reported by reason. */
enum cbn_lost_reason {
	CBN_LOST_REENTRANT = 0,   /* signal arrived while the thread was inside the agent */
	CBN_LOST_BUFFER_FULL = 1, /* the file had no free chunk left */
	CBN_LOST_NO_THREAD = 2,   /* thread had no per-thread state (raw clone, exiting) */
	CBN_LOST_FOREIGN_PID = 3, /* signal in a child that skipped atfork (raw fork) */
	CBN_LOST_DISABLED = 4,    /* the agent had disabled itself (see header.disabled_reason) */
	CBN_LOST_SANDBOXED = 5,   /* the thread was under a seccomp mode or filter of the
				   * program's (header.guard.seccomp): nothing was taken */
	CBN_LOST_SIGQUEUE = 6,    /* the kernel could not queue the perf event's signal
				   * (RLIMIT_SIGPENDING) and sent SIGIO instead, taken by the agent */
	CBN_LOST_NREASONS = 8     /* slots reserved in the header */
};

/* Why a sample holds only the interrupted pc (header.pc_only_why). */
enum cbn_pc_only_reason {
	CBN_PCONLY_NO_UNWINDER = 0, /* the agent's libunwind could not be loaded */
	CBN_PCONLY_HELD = 1,        /* fork, exit or dlclose in progress: unwinding paused */
	CBN_PCONLY_LOW_STACK = 2,   /* less than the unwinder's headroom left on the stack */
	CBN_PCONLY_NO_TRACE = 3,    /* the unwinder found no frame (pc without unwind info) */
	CBN_PCONLY_NREASONS = 8
};

/* Why a thread was not sampled at all (header.unsampled_why). */
enum cbn_unsampled_reason {
	CBN_UNSAMPLED_NO_STACK = 0, /* no memory for the handler's own stack */
	CBN_UNSAMPLED_NO_TIMER = 1, /* neither a perf event nor a POSIX timer could be made */
	CBN_UNSAMPLED_NREASONS = 4
};

/* header.notes: what the program did that the report should mention. */
#define CBN_NOTE_SIG_HANDLER 0x1     /* installed a handler for the sampling signal (moved) */
#define CBN_NOTE_SIG_BLOCKED 0x2     /* blocked the sampling signal in some thread */
#define CBN_NOTE_SIG_WAITED 0x4      /* waited for it (sigwait*, signalfd) */
#define CBN_NOTE_SIG_FORCED 0x8      /* the signal was chosen by --signal / CBN_SIGNAL */
#define CBN_NOTE_APP_ALTSTACK 0x10   /* the program set alternate signal stacks of its own */

/* header.kstack_state */
enum cbn_kstack_state {
	CBN_KSTACK_UNKNOWN = 0,          /* older file, or no thread tried yet */
	CBN_KSTACK_TAKEN = 1,            /* at least one thread had the kernel event */
	CBN_KSTACK_OFF = 2,              /* refused or turned off: kstack_reason says why */
};

/* header.timer_kind */
enum cbn_timer_kind {
	CBN_TIMER_NONE = 0,
	CBN_TIMER_POSIX_CPU = 1,  /* timer_create(CLOCK_THREAD_CPUTIME_ID), weight 1+overrun */
	CBN_TIMER_PERF_TASK_CLOCK = 2,  /* (reserved) */
	CBN_TIMER_PERF_CPU_CLOCK = 3,   /* perf_event_open(CPU_CLOCK) per thread, weight from CPU time */
};

/* header.mem.state */
enum cbn_mem_state_kind {
	CBN_MEM_OFF = 0,                 /* not asked for (or an older file) */
	CBN_MEM_ON = 1,                  /* the allocation hooks are recording */
	CBN_MEM_REFUSED = 2,             /* asked for but not recording: mem.reason says why */
};

/* header.mem.flags */
#define CBN_MEMF_EXACT 0x1           /* rate 1: every allocation has a record */
#define CBN_MEMF_USABLE 0x2          /* live/peak counters are exact (usable sizes from the
				      * allocator's malloc_usable_size); else estimated
				      * from the sampled records only */
#define CBN_MEMF_REPLACED 0x4        /* the program defines malloc itself: its own calls
				      * bypass the hooks (only libc's reach them) */
#define CBN_MEMF_FOREIGN 0x8         /* malloc comes from another preloaded allocator
				      * (jemalloc, tcmalloc, ...): hooked in front of it */

/*
 * Host memory state, written by the allocation hooks (libcbottleneck_mem.so)
 * and read by the agent's background thread.  live counts are flushed from
 * per-thread deltas (at most CBN_MEM_FLUSH bytes held back per thread), so
 * host_live is exact to within threads x CBN_MEM_FLUSH; host_peak is the
 * highest host_live seen by a flush, host_peak_ts when.
 */
#define CBN_MEM_FLUSH (64u * 1024u)
struct cbn_mem_state {
	_Atomic uint32_t state;          /* enum cbn_mem_state_kind */
	_Atomic uint32_t flags;          /* CBN_MEMF_* */
	uint64_t rate;                   /* mean bytes between sampled allocations; 1: all */
	_Atomic int64_t host_live;       /* heap (usable) + anonymous mmap bytes live now */
	_Atomic int64_t mmap_live;       /* of which anonymous mmap */
	_Atomic uint64_t host_peak;      /* highest host_live */
	_Atomic uint64_t host_peak_ts;   /* CLOCK_MONOTONIC ns of host_peak */
	_Atomic uint64_t rss_peak;       /* highest RSS the background thread read */
	_Atomic uint64_t allocs;         /* allocation calls (all, not only sampled) */
	_Atomic uint64_t frees;          /* free calls of a non-NULL pointer */
	_Atomic uint64_t alloc_bytes;    /* bytes allocated (usable sizes when USABLE) */
	_Atomic uint64_t sampled;        /* MEM_ALLOC records written */
	_Atomic uint64_t lost;           /* sampled allocations with no record (file full) */
	_Atomic uint64_t untracked;      /* sampled blocks the live table had no room for:
					  * their frees are not seen */
	_Atomic uint64_t no_stack;       /* records written without a stack (unwinder busy) */
	uint64_t brk_start;              /* program break at start */
	uint32_t reason_len;
	char reason[124];                /* why REFUSED ("" otherwise) */
};

/* header.offcpu.state */
enum cbn_offcpu_state_kind {
	CBN_OFFCPU_OFF = 0,              /* not asked for (or an older file) */
	CBN_OFFCPU_ON = 1,               /* the wall sampler is recording */
	CBN_OFFCPU_REFUSED = 2,          /* asked for but not recording: reason says why */
};

/*
 * The off-CPU (wall-clock) sampler (--off-cpu, docs/waiting.md): a thread of
 * the agent that, rate_hz times a second, looks at every thread of the
 * process without interrupting it (its CPU clock, /proc/self/task/TID/syscall)
 * and records the blocked ones (cbn_rec_offcpu).
 */
struct cbn_offcpu_state {
	_Atomic uint32_t state;          /* enum cbn_offcpu_state_kind */
	uint32_t rate_hz;                /* ticks per second */
	_Atomic uint64_t ticks;          /* ticks taken */
	_Atomic uint64_t looks;          /* thread looks (ticks x threads) */
	_Atomic uint64_t records;        /* OFFCPU records written */
	_Atomic uint64_t unconfirmed;    /* stacks dropped: the thread moved while being read */
	_Atomic uint64_t no_stack;       /* blocked looks recorded without a stack */
	_Atomic uint64_t lost;           /* blocked looks not recorded (file full) */
	_Atomic uint64_t late_ns;        /* ticks' lateness summed (the sampler's own delay) */
	uint32_t reason_len;
	char reason[92];                 /* why REFUSED ("" otherwise) */
};

/*
 * What the capture controls let through (--schedule, --delay, --duration,
 * --capture-range, cbn_start/cbn_stop, `cbottleneck ctl`, the toggle signal).
 * mode CBN_CAPTURE_ALL: no control was asked for, everything from start to
 * exit is recorded (and the rest of this block stays zero).  Otherwise the
 * agent records only inside windows: each opening and closing is a CAPTURE
 * record (cbn_rec_capture), and outside them the samplers are parked, ranges
 * and steps are not written and the CUDA layer's activities are disabled.
 */
enum cbn_capture_mode {
	CBN_CAPTURE_ALL = 0,             /* no controls: everything (older files too) */
	CBN_CAPTURE_CONTROLLED = 1,      /* only inside windows */
};

struct cbn_capture_state {
	_Atomic uint32_t mode;           /* enum cbn_capture_mode */
	_Atomic uint32_t active;         /* 1 while a window is open */
	_Atomic uint32_t windows;        /* windows opened so far */
	_Atomic uint32_t parks;          /* sampling signals taken outside windows: each
					  * parks its thread's sampler (was reserved) */
	_Atomic uint64_t steps;          /* cbn_step() calls (and matching step ranges), all */
	_Atomic uint64_t active_ns;      /* time inside closed windows */
	uint32_t spec_len;
	char spec[156];                  /* the controls, as the launcher passed them
					  * ("schedule=wait=1,warmup=1,active=3 delay=5s") */
};

/*
 * Rank identity of a process of a distributed job (docs/distributed.md).  The
 * agent fills rank, local_rank, world_size, source and host at start from the
 * launcher's environment (OMPI_COMM_WORLD_*, PMIX_RANK, PMI_*, SLURM_*,
 * RANK/LOCAL_RANK/WORLD_SIZE); libcbottleneck_mpi.so sets mpi, mpi_impl and
 * mpi_version, and rank/world_size from MPI_Comm_rank/size at MPI_Init when
 * the environment had none (source CBN_RANK_MPI).  rank -1: not a rank.
 */
enum cbn_rank_source {
	CBN_RANK_NONE = 0,
	CBN_RANK_OMPI = 1,               /* OMPI_COMM_WORLD_RANK */
	CBN_RANK_PMIX = 2,               /* PMIX_RANK */
	CBN_RANK_PMI = 3,                /* PMI_RANK (MPICH's Hydra) */
	CBN_RANK_SLURM = 4,              /* SLURM_PROCID */
	CBN_RANK_TORCH = 5,              /* RANK (torchrun and its kind) */
	CBN_RANK_MPI = 6,                /* MPI_Comm_rank(MPI_COMM_WORLD) at MPI_Init */
};

enum cbn_mpi_state_kind {
	CBN_MPI_NONE = 0,                /* no MPI wrappers active in this process */
	CBN_MPI_LOADED = 1,              /* libcbottleneck_mpi.so found libmpi here */
	CBN_MPI_INITIALIZED = 2,         /* MPI_Init(_thread) returned */
	CBN_MPI_FINALIZED = 3,           /* MPI_Finalize returned */
};

enum cbn_mpi_impl { CBN_MPI_IMPL_UNKNOWN = 0, CBN_MPI_IMPL_OPENMPI = 1, CBN_MPI_IMPL_MPICH = 2 };

struct cbn_rank_state {
	_Atomic int32_t rank;            /* world rank, -1 when not a rank */
	int32_t local_rank;              /* rank on this host, -1 unknown */
	_Atomic int32_t world_size;      /* ranks in the job, 0 unknown */
	_Atomic uint32_t source;         /* enum cbn_rank_source */
	char host[64];                   /* gethostname(), NUL-terminated */
	_Atomic uint32_t mpi;            /* enum cbn_mpi_state_kind */
	uint32_t mpi_impl;               /* enum cbn_mpi_impl */
	char mpi_version[80];            /* MPI_Get_library_version, first line */
	_Atomic uint64_t mpi_calls;      /* MPI records written */
	_Atomic uint64_t mpi_lost;       /* MPI calls not recorded (file full) */
	/* Polls that completed nothing (MPI_Test* with no request done,
	 * MPI_Iprobe with no message): counted here, not recorded one by one
	 * (a polling loop would fill the file); and the time spent in them. */
	_Atomic uint64_t mpi_polls;
	_Atomic uint64_t mpi_poll_ns;
};

/* Where the agent spends time on the program's own threads (the CPU of
 * the agent's helper threads is apart: cbn_overhead.threads_cpu_ns). */
enum cbn_overhead_site {
	CBN_OVH_HANDLER = 0,             /* the sampling signal handler */
	CBN_OVH_CUDA,                    /* CUPTI callbacks and activity buffers */
	CBN_OVH_MEM,                     /* allocation hooks */
	CBN_OVH_OTHER,                   /* thread start, fork, exec, module map */
	CBN_OVH_PYWALK,                  /* of CBN_OVH_HANDLER: reading Python frames, timed
					  * at one sample in eight, walks that copied no
					  * code object's names (calls: walks timed) */
	CBN_OVH_PYFRAMES,                /* calls: the frames those timed walks read (ns: 0) */
	CBN_OVH_NSITES = 8,
};

struct cbn_overhead {
	_Atomic uint64_t threads_cpu_ns; /* CPU of the agent's own threads */
	_Atomic uint32_t threads;        /* helper threads started */
	uint32_t reserved;
	_Atomic uint64_t site_ns[CBN_OVH_NSITES]; /* enum cbn_overhead_site */
	_Atomic uint64_t site_calls[CBN_OVH_NSITES];
	_Atomic uint64_t init_cpu_ns;    /* the agent's start-up in this image (thread CPU) */
};

/* header.python.state */
enum cbn_python_kind {
	CBN_PY_NONE = 0,                 /* no CPython interpreter in this image (or an older file) */
	CBN_PY_ON = 1,                   /* its frames are read into every stack */
	CBN_PY_OFF = 2,                  /* found, but --python off (CBN_PYTHON=0) */
	CBN_PY_REFUSED = 3,              /* found, not understood: reason says why */
};

/* Why a stack of a thread that runs Python kept only its native frames
 * (header.python.unread). */
enum cbn_py_unread {
	CBN_PYU_FINALIZING = 0,          /* the interpreter was finalizing */
	CBN_PYU_BAD_TSTATE = 1,          /* the thread's state failed validation */
	CBN_PYU_BAD_FRAME = 2,           /* a frame pointer lay outside the thread's data
					  * stack, C stack and mapped memory, or looped */
	CBN_PYU_BAD_CODE = 3,            /* a frame's code object failed its type check */
	CBN_PYU_NREASONS = 8
};

/*
 * The Python interpreter of this image (docs/agent.md section 17): which one
 * the agent understood, or why not, and what reading its frames gave.  A
 * Python frame is a word of the stack (CBN_PYW_*); its code object's names
 * and line table are in a PY_CODE record.
 */
struct cbn_python_state {
	_Atomic uint32_t state;          /* enum cbn_python_kind */
	uint32_t version;                /* PY_VERSION_HEX (0x030c01f0 = 3.12.1), 0 unknown */
	uint64_t module_base;            /* load bias of the module that holds _PyRuntime
					  * (libpython or the python executable) */
	uint64_t runtime;                /* &_PyRuntime */
	_Atomic uint64_t stacks;         /* stacks that carry Python frames */
	_Atomic uint64_t frames;         /* Python frames recorded in them */
	_Atomic uint64_t truncated;      /* of the stacks: Python chain cut (no room left) */
	_Atomic uint64_t unread[CBN_PYU_NREASONS]; /* enum cbn_py_unread */
	_Atomic uint32_t codes;          /* PY_CODE records written */
	_Atomic uint32_t codes_gone;     /* code objects that were gone when copied */
	_Atomic uint32_t table_full;     /* frames whose code object found no slot */
	uint32_t reason_len;
	char reason[120];                /* why REFUSED or OFF; "" when ON */
};

/* header.guard.seccomp */
enum cbn_seccomp_kind {
	CBN_SECCOMP_NONE = 0,
	CBN_SECCOMP_STRICT = 1,          /* prctl/seccomp strict mode on one thread */
	CBN_SECCOMP_FILTER = 2,          /* a filter on one thread (and the threads it creates) */
	CBN_SECCOMP_FILTER_ALL = 3,      /* a filter with SECCOMP_FILTER_FLAG_TSYNC: every thread */
};

/*
 * What the agent stopped, or left out, because of the program's own limits
 * and sandboxes (zero in older files; docs/agent.md section 18).
 */
struct cbn_guard_state {
	_Atomic uint32_t seccomp;        /* enum cbn_seccomp_kind: the widest seen */
	_Atomic uint32_t seccomp_tid;    /* the first thread that entered one */
	_Atomic uint64_t seccomp_ns;     /* when (CLOCK_MONOTONIC); samples, helper
					  * threads and allocation counts stop there
					  * (for that thread, or all of them) */
	_Atomic uint32_t seccomp_threads; /* threads whose sampling stopped for it */
	_Atomic uint32_t sigqueue_full;  /* threads moved off their perf event because its
					  * signal could not be queued (RLIMIT_SIGPENDING) */
	_Atomic uint64_t ring_lost_until_ns; /* ring mode: newest record of any chunk reused;
					  * what lies before it may be incomplete */
	uint64_t as_limit;               /* RLIMIT_AS (soft) at start, 0: unlimited */
	_Atomic uint64_t map_bytes;      /* the session file's address space now (it grows
					  * on demand) */
	_Atomic uint32_t exec_unprofiled; /* execs whose new image cannot be profiled
					  * (CBN_REC_UNPROFILED records say which) */
	_Atomic uint32_t end_samples;    /* samples written at a thread's end for the CPU
					  * it used since its last sample (CBN_SAMPLE_AT_END) */
};

/* cbn_file_header.unwind_check (CBN_ENV_UNWIND_CHECK). */
struct cbn_unwind_check {
	_Atomic uint64_t samples;        /* samples compared */
	_Atomic uint64_t frames;         /* frames compared */
	_Atomic uint64_t differed;       /* samples whose frames differed */
	_Atomic uint64_t cfi_checked;    /* cached "has CFI" answers compared */
	_Atomic uint64_t cfi_differed;
	_Atomic uint32_t first_taken;    /* 1 once first_* are written */
	uint32_t first_at;               /* the first differing sample: frame index */
	uint64_t first_cached_pc;        /* ... the cached unwind's pc there (0: none) */
	uint64_t first_full_pc;          /* ... the full unwind's (0: none) */
	_Atomic uint64_t fast;           /* of the samples compared: walked by the
	                                  * agent's own walk (fastwalk.c), not libunwind */
};

struct cbn_file_header {
	char magic[8];                   /* CBN_MAGIC */
	uint32_t version;                /* CBN_FORMAT_VERSION */
	uint32_t endian;                 /* CBN_ENDIAN_CHECK */
	uint32_t header_size;            /* CBN_HEADER_SIZE */
	uint32_t chunk_size;             /* CBN_CHUNK_SIZE */
	uint64_t data_offset;            /* offset of the first chunk */
	_Atomic uint64_t file_size;      /* bytes allocated so far; grows while running.
	                                  * Readers trust min(this, actual size) only. */
	_Atomic uint64_t next_chunk;     /* offset of the next free chunk; >= file_size: full */

	uint32_t pid;
	uint32_t ppid;
	uint32_t exec_seq;               /* 0 for the first image of a pid, +1 per exec */
	uint32_t signo;                  /* sampling signal */
	uint32_t timer_kind;             /* enum cbn_timer_kind */
	uint32_t max_depth;              /* frames per sample cap in force */
	uint64_t period_ns;              /* CPU time per unit of sample weight */
	uint64_t start_mono_ns;          /* agent start, CLOCK_MONOTONIC */
	uint64_t start_real_ns;          /* same instant, CLOCK_REALTIME */
	int64_t parent_pid_file;         /* pid whose file this process was forked from, or -1 */

	_Atomic uint64_t end_mono_ns;    /* last time the agent touched the file */
	_Atomic uint32_t clean_exit;     /* 1 once exit handlers ran (exit/return from main),
					  * 2 at _exit (none ran; the status is known) */
	_Atomic int32_t exit_code;       /* valid when clean_exit */
	_Atomic uint32_t disabled;       /* nonzero: agent disabled itself */
	uint32_t disabled_reason_len;
	char disabled_reason[120];       /* NUL-terminated text */
	_Atomic uint64_t samples;        /* sample records committed */
	_Atomic uint64_t lost[CBN_LOST_NREASONS];
	_Atomic uint64_t truncated;      /* samples whose stack hit max_depth */
	_Atomic uint64_t pc_only;        /* samples recorded without a full unwind */

	char exe[1024];                  /* readlink(/proc/self/exe), NUL-terminated */
	uint32_t cmdline_len;            /* bytes used in cmdline */
	char cmdline[2048];              /* argv, each NUL-terminated, truncated to fit */

	/* Appended after the first release: zero in older files. */
	_Atomic uint32_t threads_perf;   /* threads sampled with perf events */
	_Atomic uint32_t threads_timer;  /* threads sampled with POSIX CPU timers */
	_Atomic uint64_t pc_only_why[CBN_PCONLY_NREASONS];
	_Atomic uint32_t unsampled_why[CBN_UNSAMPLED_NREASONS];
	_Atomic uint32_t notes;          /* CBN_NOTE_* */
	uint32_t signo_first;            /* sampling signal at start (signo: the last one) */
	int32_t perf_errno;              /* why perf events were not used; 0 if they were */
	uint32_t timer_reason_len;
	char timer_reason[160];          /* why this process samples with the timers it has */

	/* Kernel stacks (a second, kernel-only perf event per thread; zero in
	 * older files).  kstack_state: enum cbn_kstack_state. */
	_Atomic uint32_t kstack_state;
	int32_t kstack_errno;            /* why they were refused, 0 */
	_Atomic uint32_t threads_kstacks; /* threads that had the kernel event */
	uint32_t kstack_reason_len;
	char kstack_reason[96];          /* why there are none ("" when taken) */
	_Atomic uint64_t kstack_samples; /* kernel samples attached to user samples */
	_Atomic uint64_t kstack_lost;    /* kernel samples whose stack was not kept */
	/* Of kstack_samples: on the user stack that entered the kernel, or on
	 * the next sample's (zero in older files, and both zero then). */
	_Atomic uint64_t kstack_placed;
	_Atomic uint64_t kstack_unplaced;

	/* Host memory (--memory: libcbottleneck_mem.so; all zero without it). */
	struct cbn_mem_state mem;

	/* Capture controls (all zero without them, and in older files). */
	struct cbn_capture_state capture;

	/* Ring mode (--ring TIME; zero without it).  The file's size is bounded
	 * (max_size): once full, a new SAMPLES or MEMORY chunk reuses the oldest
	 * one its thread has left (cbn_chunk_header.reserved RETIRED), so the
	 * file holds the last stretch of the run; the reader keeps what lies in
	 * the last ring_ns before the process's end.  EVENTS chunks are never
	 * reused.  chunk_seq orders chunks in ring mode (seq: allocation order). */
	uint64_t ring_ns;
	_Atomic uint64_t ring_recycled;  /* chunks reused */
	_Atomic uint32_t chunk_seq;      /* next cbn_chunk_header.seq in ring mode */
	uint32_t ring_reserved;

	/* Off-CPU sampler (--off-cpu; all zero without it). */
	struct cbn_offcpu_state offcpu;

	/* Distributed runs (all zero in older files: read rank 0 with source
	 * NONE as "not a rank"). */
	struct cbn_rank_state rank;

	/* Kernel stacks, continued (zero in older files).  A thread whose
	 * kernel event saw almost no kernel mode over CBN_KSTACK_PARK_NS of its
	 * CPU time closes it (the event's hrtimer fires every period in user
	 * mode too, which costs) and opens it again once the thread's system
	 * time grows: times closed, times opened again. */
	_Atomic uint32_t kstack_parks;
	_Atomic uint32_t kstack_unparks;

	/* The profiler's own cost in this process (zero in older files), kept
	 * apart from the program's: CPU of the agent's helper threads (their
	 * thread CPU clocks, added as each one runs and when it ends), and time
	 * spent inside the agent on the program's threads, by where. */
	struct cbn_overhead overhead;

	/* The Python interpreter (all zero without one, and in older files). */
	struct cbn_python_state python;

	/* Limits and sandboxes of the program's (zero in older files). */
	struct cbn_guard_state guard;

	/* CBN_REC_TYPE_MAX of the writer (0 in older files): a record of a type
	 * the reader does not know is a newer writer's when the writer knew
	 * more types than the reader, and corruption otherwise. */
	uint32_t rec_type_max;
	uint32_t rec_type_pad;

	/* Host memory, continued (zero in older files): anonymous mappings made
	 * PROT_NONE, address space reserved and not (yet) memory (libcuda's
	 * reservations), kept out of mem.host_live and mem.host_peak: the bytes
	 * reserved now, and the most at once. */
	_Atomic int64_t mem_reserved_live;
	_Atomic uint64_t mem_reserved_peak;

	/* Capture gates (zero in older files and without controls), shared
	 * by the agent and the launcher, which both change them
	 * (cbn_gates.h): the low 32 bits hold a bit per closed gate
	 * (CBN_GATE_*), and a window is open while none is set. */
	_Atomic uint64_t capture_gates;
	_Atomic uint64_t capture_opened_ns;   /* when the open window opened */
	_Atomic uint64_t capture_first_ns;    /* when the first window opened (--duration) */
	_Atomic uint32_t capture_toggles;     /* toggle signals the program got (--toggle-signal):
					       * the launcher flips the gate for each */
	uint32_t capture_pad;

	/* The Python interpreter, continued (zero in older files): where its
	 * types are, so that the launcher reads its frames from outside
	 * (cbn_pyread.h: the off-CPU sampler's blocked threads). */
	uint64_t python_code_type, python_unicode_type, python_bytes_type;

	/* The unwinder's self-check (CBN_UNWIND_CHECK=1; all zero without it
	 * and in older files): samples whose stack, as the handler's cached
	 * unwind gave it, was compared frame by frame with a full unwind of the
	 * same registers (libunwind's cursor, no cache), and those that
	 * differed; the cached CFI answers compared with a fresh lookup; the
	 * first difference seen. */
	struct cbn_unwind_check unwind_check;

	/* The process's start before it could be sampled (zero in older files,
	 * and in a fork child, whose clock starts at the fork): the main
	 * thread's CPU clock when the agent started (the dynamic loader's
	 * mapping and relocation; after an exec, the earlier images' CPU too),
	 * and the exec'ing thread's clock at this image's last exec. */
	_Atomic uint64_t start_thread_cpu_ns;
	_Atomic uint64_t exec_thread_cpu_ns;
};

_Static_assert(sizeof(_Atomic uint64_t) == 8, "atomic u64 must be plain-sized");
_Static_assert(sizeof(_Atomic uint32_t) == 4, "atomic u32 must be plain-sized");
_Static_assert(sizeof(struct cbn_file_header) <= CBN_HEADER_SIZE, "header too big");

enum cbn_chunk_kind {
	CBN_CHUNK_SAMPLES = 1,           /* sample records of one thread (chunk.tid) */
	CBN_CHUNK_EVENTS = 2,            /* metadata/CUDA records of any thread, under a mutex */
	CBN_CHUNK_MEMORY = 3,            /* MEM_ALLOC/MEM_FREE records of one thread (chunk.tid),
					  * written lock-free from its allocation hooks */
};

#define CBN_CHUNK_MAGIC 0x4b4e4843u  /* "CHNK" */

/* cbn_chunk_header.reserved (ring mode): 0 in use, RETIRED once its thread
 * has moved to a new chunk (the chunk may be reused), CLAIMED while a writer
 * reinitialises it. */
#define CBN_CHUNK_RETIRED 1
#define CBN_CHUNK_CLAIMED 2
#define CBN_CHUNK_FINAL 3           /* retired, and its thread's last: reused only
				     * when no RETIRED one is left */

struct cbn_chunk_header {
	uint32_t magic;                  /* CBN_CHUNK_MAGIC */
	uint16_t kind;                   /* enum cbn_chunk_kind */
	uint16_t reserved;               /* ring mode: CBN_CHUNK_RETIRED/CLAIMED, else 0 */
	uint32_t tid;                    /* owner thread for SAMPLES, 0 for EVENTS */
	uint32_t seq;                    /* per-file allocation sequence */
	_Atomic uint64_t used;           /* bytes of committed records after this header */
};
_Static_assert(sizeof(struct cbn_chunk_header) == 24, "chunk header layout");

/* The highest record type below: raise it with each new CBN_REC_* (the
 * reader's unit test fails when the reader knows a type above it). */
#define CBN_REC_TYPE_MAX 54

/* Record types.  Never renumber; retired values stay reserved. */
enum cbn_rec_type {
	CBN_REC_PAD = 0,                 /* filler, skip */
	CBN_REC_SAMPLE = 1,
	CBN_REC_THREAD_START = 2,
	CBN_REC_THREAD_END = 3,
	CBN_REC_THREAD_NAME = 4,
	CBN_REC_MODULE_LOAD = 5,
	CBN_REC_MODULE_UNLOAD = 6,
	CBN_REC_PROCESS_EXIT = 7,
	CBN_REC_RANGE = 8,               /* annotation / NVTX range or mark */
	CBN_REC_CAPTURE = 9,             /* a capture window opened or closed (cbn_rec_capture) */
	CBN_REC_OFFCPU = 10,             /* a thread off the CPU: a stretch of wall-sampler ticks
					  * (cbn_rec_offcpu, --off-cpu) */
	CBN_REC_MPI = 11,                /* one MPI call (cbn_rec_mpi, libcbottleneck_mpi.so) */
	CBN_REC_CLOCK = 12,              /* a clock offset against rank 0 (cbn_rec_clock) */
	CBN_REC_UNPROFILED = 16,         /* an exec whose new image cannot be profiled
					  * (cbn_rec_unprofiled) */
	CBN_REC_CUDA_API = 20,
	CBN_REC_CUDA_STACK = 21,         /* host stack captured at an API enter */
	CBN_REC_CUDA_KERNEL = 22,
	CBN_REC_CUDA_MEMCPY = 23,
	CBN_REC_CUDA_MEMSET = 24,
	CBN_REC_CUDA_SYNC = 25,
	CBN_REC_CUDA_OVERHEAD = 26,
	CBN_REC_CUDA_DEVICE = 27,
	CBN_REC_CUDA_CONTEXT = 28,
	CBN_REC_CUDA_MEMORY = 29,
	CBN_REC_CUDA_STATUS = 30,
	CBN_REC_CUDA_MEMPOOL = 31,       /* CUPTI MEMORY_POOL: pool created/destroyed/trimmed */
	CBN_REC_MEM_ALLOC = 40,          /* a sampled host allocation, with its stack */
	CBN_REC_MEM_FREE = 41,           /* the release of a block that had a MEM_ALLOC */
	CBN_REC_MEM_COUNTERS = 42,       /* RSS and live bytes (the monitor's, the agent's ends) */
	CBN_REC_PY_CODE = 50,            /* a Python code object's names and line table */
	CBN_REC_JIT_REGION = 51,         /* executable memory outside every module (cbn_rec_jit_region) */
	CBN_REC_PY_CALLS = 52,           /* exact Python call counts (cbn_rec_py_calls, --calls) */
	CBN_REC_PY_CCALLS = 53,          /* exact calls of C functions from Python
					  * (cbn_rec_py_ccalls, --calls) */
	CBN_REC_CODE_FILE = 54,          /* a file the program mapped executable itself
					  * (cbn_rec_code_file) */
};

struct cbn_rec {
	uint16_t type;                   /* enum cbn_rec_type */
	uint16_t flags;
	uint32_t size;                   /* whole record incl. this header; multiple of 8 */
};

#define CBN_REC_ALIGN(n) (((n) + 7u) & ~(size_t)7u)

/* --- CPU ------------------------------------------------------------------ */

#define CBN_SAMPLE_TRUNCATED 0x1     /* stack was cut at max_depth */
#define CBN_SAMPLE_PC_ONLY 0x2       /* only the interrupted pc (thread not warmed up, ...) */
#define CBN_SAMPLE_KSTACKS 0x4       /* struct cbn_kstacks follows pc[nframes] */
#define CBN_SAMPLE_AT_END 0x8        /* written at the thread's end for the CPU it used
				      * since its last sample, with the probability that
				      * CPU gave a sample (so short threads count in
				      * proportion); its stack is the thread's last
				      * sample's, or its start routine alone */
#define CBN_SAMPLE_SHARED 0x10       /* struct cbn_sample_share follows pc[nframes]: the
				      * stack's outer frames are those of the chunk's
				      * latest full sample (cbn_share.h) */
#define CBN_SAMPLE_UNSEEN 0x20       /* with AT_END: the thread had no sample to take its
				      * stack from; pc[0] is its start routine, the caller
				      * of CPU no sample saw */

/* In a SAMPLES chunk; the thread is chunk.tid.  pc[0] is the interrupted pc,
 * pc[1..] are return addresses (the reader symbolizes pc[i]-1 for i >= 1). */
struct cbn_rec_sample {
	struct cbn_rec h;                /* h.flags: CBN_SAMPLE_* */
	uint64_t ts;
	uint32_t weight;                 /* periods of thread CPU this sample stands for */
	uint16_t nframes;
	uint16_t kweight;                /* of which spent in the kernel (0 in older files) */
	uint64_t pc[];                   /* nframes entries */
};

/*
 * With CBN_SAMPLE_SHARED, after pc[nframes] (before the kernel stacks): the
 * sample's stack is its own pcs with the outer frames of its base, the latest
 * sample of the same chunk written without the flag, put back (cbn_share.h):
 * the own native frames, then the base's last `native` native frames, then
 * the own Python words (CBN_PYW), then the base's last `python` Python words.
 * A deep stack that stays the same from one sample to the next is written as
 * its few changed leaf frames.  Each part counts in the stack's depth
 * (nframes + native + python <= CBN_MAX_FRAMES); a placement's drop
 * (struct cbn_kplace) indexes the whole stack.
 */
struct cbn_sample_share {
	uint32_t base;                   /* the base record's offset from the chunk's first
					  * record (checked: the latest full sample) */
	uint16_t native;                 /* its native frames shared (the outermost ones) */
	uint16_t python;                 /* its Python words shared (the outermost ones) */
};

/*
 * With CBN_SAMPLE_KSTACKS, after pc[nframes] and the share, if any (inside
 * h.size, which readers that predate it ignore): the kernel stacks the
 * thread's kernel-only perf event sampled since its previous sample,
 * distinct stacks with counts.  The sample's kweight is shared among them
 * in proportion to count; lost counts kernel samples whose stack is not
 * here (ring full, too many distinct stacks).  Each stack is leaf first;
 * pc[1..] are return addresses.
 */
struct cbn_kstacks {
	uint16_t nstacks;
	uint16_t flags;                  /* CBN_KSTACKS_* (0 in older files) */
	uint32_t lost;
	/* nstacks x { struct cbn_kstack, uint64_t pc[nframes] }
	 * then, with CBN_KSTACKS_PLACED, nstacks x { struct cbn_kplace,
	 * uint64_t pc[nuser] }, in the same order (older readers stop before). */
};

#define CBN_KSTACKS_PLACED 0x1       /* a struct cbn_kplace per stack follows them */
#define CBN_KSTACK_TRUNCATED 0x1     /* the kernel's chain was longer than kept */

/*
 * Where a kernel stack's system call came from, when the agent could tell: the
 * user stack at kernel entry (pc[0], the user pc, then return addresses, as a
 * sample's pcs) down to a frame still live in the sample, followed by the
 * sample's own pcs from index drop on.  nuser 0: not placed (the stack sits
 * on the sample's whole user stack, as in older files).
 */
struct cbn_kplace {
	uint16_t nuser;                  /* 0..CBN_KPLACE_MAX_FRAMES */
	uint16_t drop;                   /* <= the sample's nframes */
	uint32_t reserved;
	uint64_t pc[];
};

#define CBN_KPLACE_MAX_FRAMES 16     /* user frames at entry kept per kernel stack */

struct cbn_kstack {
	uint32_t count;                  /* kernel samples with this stack */
	uint16_t nframes;                /* 1..CBN_KSTACK_MAX_FRAMES */
	uint16_t flags;                  /* CBN_KSTACK_* */
	uint64_t pc[];
};

#define CBN_KSTACK_MAX_FRAMES 64     /* frames kept per kernel stack */
/* A thread's kernel event closes after a window of CBN_KSTACK_PARK_NS of its
 * CPU time in which kernel mode had under 1/CBN_KSTACK_PARK_SHARE of it (the
 * sampler's own signal delivery is some: 1.2 % at 1 kHz on a virtual
 * machine). */
#define CBN_KSTACK_PARK_NS 100000000ull
#define CBN_KSTACK_PARK_SHARE 32u
#define CBN_KSTACK_MAX_STACKS 16     /* distinct kernel stacks per sample */

/*
 * Python frames in a stack.  Every stack the agent records (a sample's pcs,
 * CUDA_STACK, MEM_ALLOC, OFFCPU, MPI) may end with Python frames, one word
 * each, leaf first, after its native pcs: words no x86-64 pc can be (bits
 * 63..52 = CBN_PYW_TAG, a non-canonical address).  Each names a PY_CODE record
 * of the same file (code) and the instruction executing (unit: the index of
 * the code unit + 1; 0 before the first instruction, the function's first
 * line; CBN_PYW_UNIT_UNKNOWN when it lay outside the code).  The launcher puts
 * each run of frames (an activation of the interpreter's evaluation loop, its
 * root-most frame flagged ENTRY) where its _PyEval_EvalFrameDefault frame
 * stands in the native stack (docs/agent.md section 17).
 */
#define CBN_PYW_TAG 0xcb5ull
#define CBN_PYW_IS(w) (((uint64_t)(w) >> 52) == CBN_PYW_TAG)
#define CBN_PYW_ENTRY 0x1            /* the root-most frame of an evaluation-loop activation */
#define CBN_PYW_TRUNC 0x2            /* the root-most word kept: the chain went on */
#define CBN_PYW_FLAGS(w) ((uint32_t)((w) >> 48) & 0xf)
#define CBN_PYW_CODE(w) ((uint32_t)((w) >> 24) & 0xffffff) /* PY_CODE id, 0 unknown */
#define CBN_PYW_UNIT(w) ((uint32_t)(w) & 0xffffff)
#define CBN_PYW_UNIT_UNKNOWN 0xffffffu
#define CBN_PYW_MAKE(flags, code, unit)                                                       \
	((CBN_PYW_TAG << 52) | ((uint64_t)((flags) & 0xf) << 48) |                            \
	 ((uint64_t)((code) & 0xffffff) << 24) | (uint64_t)((unit) & 0xffffff))
#define CBN_PY_CODES_MAX 0xfffffeu   /* ids 1 .. this */
/* Ids the launcher gives code objects it meets reading a process from
 * outside (PY_CODE records of its side file) start here: the agent's stay
 * below (its table holds 49152). */
#define CBN_PY_SIDE_ID_BASE 0x10000u

/*
 * Unwinding past code without unwind information (docs/symbols.md, "Code
 * without unwind information").  When a stack's unwinding stops at a pc that
 * has no CFI (JIT code in anonymous memory, an assembly function of a module
 * without .cfi directives), the agent goes on by frame pointer, else by a
 * bounded scan of the stack for a return address into known code right
 * after a call instruction.  The native part of any stack may then hold
 * marker words (non-canonical, bits 63..52 = CBN_UWM_TAG):
 *   - UWM(FP or SCAN, where) before the first frame found that way: the
 *     frames after it, root-ward, come from that recovery (the frame before
 *     it is where the CFI ran out, of kind where);
 *   - UWM(STOP, where) as the last native word: the unwinding stopped at the
 *     frame before it, and no recovery found a caller (no frame pointer, no
 *     return address within CBN_UWM_SCAN_WORDS words of the stack).
 * A stack holds at most CBN_UWM_MAX recoveries.  Readers drop the markers
 * from the frames and keep what they say.
 */
#define CBN_UWM_TAG 0xcb6ull
#define CBN_UWM_IS(w) (((uint64_t)(w) >> 52) == CBN_UWM_TAG)
#define CBN_UWM_FP 1u                /* kind: recovered by the frame pointer */
#define CBN_UWM_SCAN 2u              /* kind: recovered by scanning the stack */
#define CBN_UWM_STOP 3u              /* kind: stopped, nothing recovered */
#define CBN_UWM_JIT 1u               /* where: a pc in no module (JIT code) */
#define CBN_UWM_NOCFI 2u             /* where: a pc of a module, without CFI */
#define CBN_UWM_KIND(w) ((uint32_t)((w) >> 48) & 0xf)
#define CBN_UWM_WHERE(w) ((uint32_t)((w) >> 44) & 0xf)
#define CBN_UWM_MAKE(kind, where)                                                          \
	((CBN_UWM_TAG << 52) | ((uint64_t)((kind) & 0xf) << 48) | ((uint64_t)((where) & 0xf) << 44))
#define CBN_UWM_SCAN_WORDS 192       /* stack words a scan looks at, from the stop's sp */
#define CBN_UWM_MAX 4                /* recoveries in one stack */

/*
 * JIT_REGION, in the EVENTS chunks: memory made executable outside every
 * module (an anonymous mmap or mprotect with PROT_EXEC: JIT compilers), or
 * such memory released (flag GONE), or a jitdump file the program mapped
 * (flag JITDUMP, name: its path; perf's convention for finding it).  The
 * launcher names pcs in a region from the process's perf map and jitdump
 * (copied into the session at the end of the run), else "[jit] 0xSTART".
 */
#define CBN_JIT_GONE 0x1             /* the range stopped being executable or mapped */
#define CBN_JIT_JITDUMP 0x2          /* a jitdump file mapped; name is its path */
struct cbn_rec_jit_region {
	struct cbn_rec h;                /* h.flags: CBN_JIT_* */
	uint64_t ts;
	uint64_t start, len;
	uint32_t tid;
	uint32_t name_len;               /* bytes of name, no NUL */
	char name[];
};

/*
 * CODE_FILE, in the EVENTS chunks: a file the program itself (not the
 * loader) mapped executable, [start, start+len) from byte offset of name:
 * V8 maps its own binary's builtins a second time near its JIT code.  When
 * the file is one of the process's modules, the launcher resolves pcs there
 * as that module's code at the same file offset; a JIT_REGION with flag
 * GONE over the range ends it.
 */
struct cbn_rec_code_file {
	struct cbn_rec h;
	uint64_t ts;
	uint64_t start, len;
	uint64_t offset;                 /* the mapping's file offset */
	uint32_t tid;
	uint32_t name_len;               /* bytes of the path, no NUL */
	char name[];
};

/*
 * PY_CODE, in the EVENTS chunks: what the agent copied of a code object the
 * first time a stack held it (outside the signal handler, soon after).  id is
 * the CBN_PYW_CODE of its frames.  data: qualname, NUL, filename, NUL, then
 * linetable_len bytes of co_linetable (the PEP 626/657 location table of
 * CPython 3.11+).  With CBN_PYC_GONE the object had died or changed before it
 * could be copied: only id and addr are meaningful.
 */
#define CBN_PYC_GONE 0x1             /* names unknown */
#define CBN_PYC_LINES_CUT 0x2        /* the line table was longer than kept */
#define CBN_PY_NAME_MAX 1024         /* bytes kept of a qualname or filename */
#define CBN_PY_LINETABLE_MAX 16384   /* bytes kept of a line table */

struct cbn_rec_py_code {
	struct cbn_rec h;                /* h.flags: CBN_PYC_* */
	uint32_t id;
	int32_t firstlineno;
	uint64_t addr;                   /* where the code object was */
	uint32_t units;                  /* code units of its bytecode */
	uint32_t co_flags;
	uint16_t qualname_len;           /* strlen of each string */
	uint16_t filename_len;
	uint32_t linetable_len;
	char data[];
};

/*
 * Exact call counts of Python functions (--calls; docs/format.md), counted
 * as cProfile counts: a call is the start or resumption of a frame (a
 * generator's resumption too), a primitive call one made while no call of
 * the same code object was running.  state says whether the process counts:
 * a record with n = 0 is written when counting starts or is refused.  The
 * counts themselves are blocks of the agent's table (CBN_PYCALLS_TABLE),
 * each written when its first id is counted and counted in place after,
 * so they hold what was counted until the process ended, however it ended;
 * at exit (and before an exec) the counts a block that found no room in
 * the file kept, and a record of n = 0 with the flags as they are then.
 * The reader adds every entry up.  Each entry names a PY_CODE id.
 */
enum cbn_py_calls_state {
	CBN_PYCALLS_ON = 1,              /* counted through sys.monitoring (3.12+), or on
					  * 3.11 the frame evaluation or a profile function */
	CBN_PYCALLS_TOOL_TAKEN = 2,      /* 3.12+: no free sys.monitoring tool id */
	CBN_PYCALLS_FAILED = 3,          /* the interpreter refused the registration */
	CBN_PYCALLS_NO_API = 4,          /* an API the counting needs was not found */
	CBN_PYCALLS_NOT_STARTED = 5,     /* the interpreter never reached the point where
					  * counting starts (it installed none of its
					  * signal dispositions, from a Python thread) */
};
#define CBN_PYCALLS_MAIN_ONLY 0x1    /* h.flags: one thread's calls only (3.11's profile function) */
#define CBN_PYCALLS_BUILTINS 0x2     /* h.flags: builtins counted too (PY_CCALLS) */
#define CBN_PYCALLS_SWITCHED 0x4     /* h.flags: 3.11, a thread ran low on C stack: while it
				      * did, its profile function counted its calls, alone */
#define CBN_PYCALLS_STOPPED 0x8      /* h.flags: 3.11, as SWITCHED, but the program's own profile
				      * function held the slot: nothing counted meanwhile */
#define CBN_PYCALLS_REPLACED 0x10    /* h.flags: 3.11, the program set a frame evaluation function
				      * of its own after ours */
#define CBN_PYCALLS_PROFILE_TAKEN 0x20 /* h.flags: 3.11 with builtins, the program set a profile
					* function of its own in the main thread: ours was out */
#define CBN_PYCALLS_TABLE 0x40       /* h.flags: one block of the agent's table, counted in place
				      * after the record was written (so a process killed by a
				      * signal keeps its counts): its entries hold ids n*BATCH
				      * onwards, those of 0 calls are empty */

struct cbn_py_call_count {
	uint32_t id;                     /* PY_CODE id */
	uint32_t pad;
	uint64_t calls;                  /* every call */
	uint64_t primitive;              /* calls not nested in a call of the same code */
};

struct cbn_rec_py_calls {
	struct cbn_rec h;                /* h.flags: CBN_PYCALLS_* flags */
	uint32_t state;                  /* enum cbn_py_calls_state */
	uint32_t n;                      /* entries that follow */
	struct cbn_py_call_count c[];
};
#define CBN_PY_CALLS_BATCH 1024      /* entries per record at most */

/*
 * Exact calls of builtins and of methods of C types (--calls), counted as
 * cProfile counts them where the interpreter reports them (CPython 3.11's
 * profile function: the main thread; 3.12+'s sys.monitoring with
 * --calls=builtins: every thread): one entry per method definition
 * (PyMethodDef), the calls since the last such record.  meth is the C
 * function's address in the process (a sample in it names the same
 * function); label is cProfile's name for it, e.g. "{built-in method
 * builtins.len}" or "{method 'append' of 'list' objects}", NUL-terminated
 * and cut to fit.  Written after the PY_CALLS record of the same flush.
 */
#define CBN_PY_CLABEL 88
struct cbn_py_ccall_count {
	uint64_t meth;
	uint64_t calls;
	uint64_t primitive;              /* calls not nested in one of the same */
	char label[CBN_PY_CLABEL];
};

struct cbn_rec_py_ccalls {
	struct cbn_rec h;
	uint32_t n;                      /* entries that follow */
	uint32_t pad;
	struct cbn_py_ccall_count c[];
};
#define CBN_PY_CCALLS_BATCH 256      /* entries per record at most */
#define CBN_PYCCALLS_TABLE 0x1       /* h.flags: one block of the agent's table, filled and
				      * counted in place after the record was written: an entry
				      * is given meth and label at its definition's first call,
				      * those of 0 calls are empty */

struct cbn_rec_thread {              /* THREAD_START, THREAD_END, THREAD_NAME */
	struct cbn_rec h;
	uint64_t ts;
	uint32_t tid;
	uint32_t reserved;
	uint64_t cpu_ns;                 /* THREAD_END: thread CPU time, else 0 */
	char name[CBN_NAME_MAX];         /* NUL-terminated */
};

struct cbn_segment {
	uint64_t vaddr;                  /* p_vaddr */
	uint64_t memsz;
	uint64_t offset;                 /* p_offset */
	uint32_t flags;                  /* p_flags (PF_X ...) */
	uint32_t reserved;
};

/* A module (executable, shared object, vdso) mapped at base (the load bias,
 * dlpi_addr).  Runtime address = base + p_vaddr-relative address. */
struct cbn_rec_module {              /* MODULE_LOAD, MODULE_UNLOAD */
	struct cbn_rec h;
	uint64_t ts;
	uint64_t base;
	uint32_t seq;                    /* load order in the process */
	uint16_t build_id_len;
	uint16_t nseg;
	uint8_t build_id[CBN_BUILD_ID_MAX];
	uint32_t path_len;               /* strlen(path), path follows the segments */
	struct cbn_segment seg[];        /* nseg entries, then path (NUL-terminated) */
};

struct cbn_rec_exit {
	struct cbn_rec h;
	uint64_t ts;
	int32_t status;                  /* exit() argument */
	uint32_t reserved;
};

enum cbn_range_kind {
	CBN_RANGE_PUSHPOP = 1,           /* nvtxRangePush/Pop, cbn_range_push/pop */
	CBN_RANGE_STARTEND = 2,          /* nvtxRangeStart/End (may cross threads) */
	CBN_RANGE_MARK = 3,              /* instant: start == end */
	CBN_RANGE_STEP = 4,              /* cbn_step(): a step marker, instant */
};

enum cbn_range_source {
	CBN_SRC_ANNOTATION = 1,          /* include/cbottleneck.h */
	CBN_SRC_NVTX = 2,
};

/* Written when a range closes (or at a mark).  Strings follow: domain (may be
 * empty), then name, each NUL-terminated. */
struct cbn_rec_range {
	struct cbn_rec h;
	uint64_t start;
	uint64_t end;
	uint32_t tid;                    /* thread that opened it */
	uint16_t kind;                   /* enum cbn_range_kind */
	uint16_t source;                 /* enum cbn_range_source */
	uint32_t depth;                  /* nesting depth at push (PUSHPOP), else 0 */
	uint16_t domain_len;             /* strlen(domain) */
	uint16_t name_len;               /* strlen(name) */
	char strings[];
};

/* What opened or closed a capture window (cbn_rec_capture.cause). */
enum cbn_capture_cause {
	CBN_CAUSE_START = 1,             /* the process started recording (controls that start
					  * active: --duration alone, a schedule's skip_first=0 ...) */
	CBN_CAUSE_API = 2,               /* cbn_start() / cbn_stop() */
	CBN_CAUSE_SCHEDULE = 3,          /* --schedule, at a cbn_step() */
	CBN_CAUSE_DELAY = 4,             /* --delay elapsed */
	CBN_CAUSE_DURATION = 5,          /* --duration elapsed */
	CBN_CAUSE_NVTX = 6,              /* --capture-range nvtx:NAME: the range opened/closed */
	CBN_CAUSE_CUDA_PROFILER = 7,     /* --capture-range cudaProfilerApi: cudaProfilerStart/Stop */
	CBN_CAUSE_CTL = 8,               /* cbottleneck ctl PID start|stop */
	CBN_CAUSE_SIGNAL = 9,            /* the toggle signal (--toggle-signal SIGUSR2) */
	CBN_CAUSE_EXIT = 10,             /* the process ended inside a window */
};

enum cbn_capture_event {
	CBN_CAPTURE_OPEN = 1,
	CBN_CAPTURE_CLOSE = 2,
	CBN_CAPTURE_MARK = 3,            /* cbottleneck ctl PID mark NAME: an instant, name follows */
};

/* CAPTURE: written by the thread that changed the state.  step: cbn_step()
 * calls so far.  A window the schedule opens is opened by a cbn_step() call,
 * counted in step: its first step is number step - 1 (0-based, as torch's
 * ProfilerStep#N); a window opened otherwise (ctl, delay, ...) opens inside
 * step step - 1, and the next marker starts step number step.  A MARK carries
 * its name (NUL-terminated). */
struct cbn_rec_capture {
	struct cbn_rec h;
	uint64_t ts;
	uint64_t step;
	uint32_t tid;
	uint16_t event;                  /* enum cbn_capture_event */
	uint16_t cause;                  /* enum cbn_capture_cause */
	uint32_t name_len;               /* MARK: strlen(name), else 0 */
	uint32_t reserved;
	char name[];
};

/* --- off-CPU (--off-cpu) ---------------------------------------------------- */

/* What a blocked thread was waiting in, from its system call number. */
enum cbn_offcpu_kind {
	CBN_OFF_OTHER = 0,               /* another system call */
	CBN_OFF_FUTEX = 1,               /* futex: mutex, condition variable, join, barrier,
					  * semaphore, an OpenMP/TBB wait once it sleeps */
	CBN_OFF_IO = 2,                  /* read/write/recv/send families, fsync, open, ... */
	CBN_OFF_POLL = 3,                /* poll, ppoll, select, pselect6, epoll_wait/pwait */
	CBN_OFF_SLEEP = 4,               /* nanosleep, clock_nanosleep, pause, sigsuspend,
					  * rt_sigtimedwait */
	CBN_OFF_CHILD = 5,               /* wait4, waitid: a child process */
	CBN_OFF_FAULT = 6,               /* blocked outside a system call: a page fault, a
					  * stop ("-1 sp pc" in /proc/.../syscall) */
	CBN_OFF_RUNQ = 7,                /* runnable but not running (schedstat's run delay);
					  * no stack, syscall -2 */
	CBN_OFF_NKINDS = 8
};

#define CBN_OFFCPU_TRUNCATED 0x1     /* the stack was cut at the depth cap */
#define CBN_OFFCPU_NO_STACK 0x2      /* no stack (could not be read or confirmed) */

/*
 * OFFCPU, in the EVENTS chunks, written by the wall sampler.  One record is a
 * stretch of consecutive ticks at which thread tid was seen blocked at the
 * same place (same system call, stack pointer and pc): start is the first such
 * tick, end the last one plus one tick, weight_ns the ticks' share of wall
 * time (ticks x tick period; a RUNQ record: schedstat's run-delay increase).
 * While the stretch lasts the agent updates end and weight_ns in place (8-byte
 * stores), so a process killed mid-wait keeps what was seen.  A long stretch
 * is cut every second of wall (same stack, a new record).
 *   addr:  futex: the futex word (argument 0); IO/POLL: argument 0 (the fd or
 *          the pollfd array); else 0.
 *   owner: futex: the 32-bit word at addr + 8, read at every look (a new
 *          value starts a new record): a glibc pthread_mutex_t's owner tid,
 *          meaningful only when the stack is in a mutex lock, which the
 *          report decides; else 0.
 * pc[0] is where the system call returns to (symbolize it as is), pc[1..]
 * return addresses, as in a sample.
 */
struct cbn_rec_offcpu {
	struct cbn_rec h;                /* h.flags: CBN_OFFCPU_* */
	uint64_t start, end;             /* CLOCK_MONOTONIC ns */
	uint64_t weight_ns;
	uint64_t addr;
	uint32_t tid;
	int32_t syscall;                 /* number; -1 outside a system call; -2 RUNQ */
	uint32_t owner;
	uint16_t kind;                   /* enum cbn_offcpu_kind */
	uint16_t nframes;
	uint64_t pc[];                   /* nframes entries */
};

/* --- MPI (written by libcbottleneck_mpi.so through the agent) ------------- */

/*
 * One MPI call, written when it returns.  call: enum cbn_mpi_call
 * (cbn_mpi.h).  Bytes come from PMPI_Type_size x count (the v-variants summed
 * over peers; a receive counts what its status says arrived).  peer: the
 * destination, source or root as a rank of comm; CBN_MPI_PEER_NONE for calls
 * without one, CBN_MPI_PEER_ANY for MPI_ANY_SOURCE that no status resolved.
 * comm: an id the same on every rank of the communicator (0 = MPI_COMM_WORLD,
 * 1 = MPI_COMM_SELF, else a hash of the world ranks of its members, see
 * docs/distributed.md); seq: this rank's 1-based count of collectives on comm
 * (blocking and non-blocking together), which matches the same collective
 * across ranks; 0 for other calls.  pc[]: the host call site (innermost
 * first, the wrapper's own frames skipped).
 */
#define CBN_MPI_PEER_NONE (-1)
#define CBN_MPI_PEER_ANY (-2)
#define CBN_MPI_F_INPLACE 0x1            /* MPI_IN_PLACE send buffer */
#define CBN_MPI_F_ERROR 0x2              /* the call returned an error */

struct cbn_rec_mpi {
	struct cbn_rec h;                /* h.flags: CBN_MPI_F_* */
	uint64_t start, end;             /* CLOCK_MONOTONIC ns */
	uint64_t bytes_sent, bytes_recv;
	uint32_t tid;
	uint16_t call;                   /* enum cbn_mpi_call */
	uint16_t nframes;
	int32_t peer;
	int32_t tag;                     /* or 0 */
	uint32_t comm;
	int32_t comm_size;
	uint32_t seq;
	uint32_t count;                  /* wait/test family: requests completed; else 0 */
	uint64_t pc[];                   /* nframes entries */
};

/*
 * A clock-offset estimate (distributed runs): at MPI_Init (h.flags 0) and at
 * MPI_Finalize (h.flags 1) every rank other than ref_rank exchanges `rounds`
 * zero-byte ping-pongs with it through PMPI; the one with the least round
 * trip gives offset = (ref's time + rtt/2) - local time, with uncertainty
 * rtt/2.  A timestamp t of this process maps to ref's clock as t + offset,
 * offsets between the two estimates interpolated linearly (drift).
 * Rank ref_rank writes one with offset 0, rtt 0.
 */
#define CBN_CLOCK_AT_INIT 0
#define CBN_CLOCK_AT_FINALIZE 1

struct cbn_rec_clock {
	struct cbn_rec h;                /* h.flags: CBN_CLOCK_AT_* */
	uint64_t local;                  /* CLOCK_MONOTONIC ns of this process */
	int64_t offset;                  /* ref's clock - this clock, ns */
	uint64_t rtt;                    /* best round trip, ns */
	uint64_t real;                   /* CLOCK_REALTIME ns at local */
	int32_t ref_rank;
	uint32_t rounds;
};

/* --- CUDA (written by libcbottleneck_cuda.so through the agent) ----------- */

enum cbn_cuda_domain { CBN_CUDA_RUNTIME = 1, CBN_CUDA_DRIVER = 2 };

/* One runtime/driver API call (from the callback API enter/exit).  name follows. */
struct cbn_rec_cuda_api {
	struct cbn_rec h;
	uint64_t start;
	uint64_t end;
	uint32_t tid;
	uint32_t correlation;
	uint32_t cbid;
	uint16_t domain;                 /* enum cbn_cuda_domain */
	uint16_t name_len;
	int32_t ret;                     /* return value */
	uint32_t reserved;
	char name[];                     /* e.g. "cudaLaunchKernel" (no _vNNNN suffix) */
};

/* Host stack at the enter of a launch/copy/sync call; joined by correlation. */
/* With CBN_CSTACK_KEYED in h.flags a 64-bit key (the stack's hash) follows
 * pc[nframes], inside h.size: a record with frames defines the key for its
 * process, one with nframes 0 stands for the stack defined earlier with that
 * key (the layer writes a launch site's stack once per thread, then its key:
 * 16 bytes instead of 8 a frame).  Readers that predate it see nframes 0: no
 * stack. */
#define CBN_CSTACK_KEYED 0x1

struct cbn_rec_cuda_stack {
	struct cbn_rec h;                /* h.flags: CBN_CSTACK_KEYED */
	uint32_t correlation;
	uint32_t tid;
	uint16_t nframes;                /* pc[0] is a return address like the others */
	uint16_t reserved[3];
	uint64_t pc[];
};

struct cbn_rec_cuda_kernel {
	struct cbn_rec h;
	uint64_t start;
	uint64_t end;
	uint32_t device;
	uint32_t context;
	uint32_t stream;
	uint32_t correlation;
	int32_t grid[3];
	int32_t block[3];
	uint32_t registers;              /* per thread */
	int32_t static_smem;
	int32_t dynamic_smem;
	uint32_t shmem_limit_optin;      /* 1 when shmemLimitConfig == OPTIN */
	uint32_t graph_id;
	uint32_t reserved;
	uint64_t graph_node_id;
	uint32_t name_len;
	uint32_t reserved2;
	char name[];                     /* mangled name as CUPTI gave it */
};

enum cbn_copy_kind {                 /* = CUpti_ActivityMemcpyKind values */
	CBN_COPY_UNKNOWN = 0, CBN_COPY_HTOD = 1, CBN_COPY_DTOH = 2, CBN_COPY_HTOA = 3,
	CBN_COPY_ATOH = 4, CBN_COPY_ATOA = 5, CBN_COPY_ATOD = 6, CBN_COPY_DTOA = 7,
	CBN_COPY_DTOD = 8, CBN_COPY_HTOH = 9, CBN_COPY_PTOP = 10,
};

enum cbn_mem_kind {                  /* = CUpti_ActivityMemoryKind values */
	CBN_MEM_UNKNOWN = 0, CBN_MEM_PAGEABLE = 1, CBN_MEM_PINNED = 2, CBN_MEM_DEVICE = 3,
	CBN_MEM_ARRAY = 4, CBN_MEM_MANAGED = 5, CBN_MEM_DEVICE_STATIC = 6,
	CBN_MEM_MANAGED_STATIC = 7,
};

#define CBN_GPU_ASYNC 0x1            /* h.flags on MEMCPY/MEMSET: asynchronous */
#define CBN_GPU_PEER 0x2             /* h.flags on MEMCPY: from MEMCPY2 (peer) */

struct cbn_rec_cuda_memcpy {
	struct cbn_rec h;
	uint64_t start;
	uint64_t end;
	uint64_t bytes;
	uint32_t device;
	uint32_t context;
	uint32_t stream;
	uint32_t correlation;
	uint8_t copy_kind;               /* enum cbn_copy_kind */
	uint8_t src_kind;                /* enum cbn_mem_kind */
	uint8_t dst_kind;
	uint8_t reserved;
	uint32_t src_device;             /* peer copies */
	uint32_t dst_device;
	uint32_t graph_id;
};

struct cbn_rec_cuda_memset {
	struct cbn_rec h;
	uint64_t start;
	uint64_t end;
	uint64_t bytes;
	uint32_t device;
	uint32_t context;
	uint32_t stream;
	uint32_t correlation;
	uint32_t value;
	uint16_t mem_kind;
	uint16_t reserved;
};

struct cbn_rec_cuda_sync {
	struct cbn_rec h;
	uint64_t start;
	uint64_t end;
	uint32_t type;                   /* CUpti_ActivitySynchronizationType */
	uint32_t correlation;
	uint32_t context;
	uint32_t stream;                 /* 0xffffffff when not applicable */
};

struct cbn_rec_cuda_overhead {
	struct cbn_rec h;
	uint64_t start;
	uint64_t end;
	uint32_t kind;                   /* CUpti_ActivityOverheadKind */
	uint32_t correlation;
};

struct cbn_rec_cuda_device {
	struct cbn_rec h;
	uint64_t global_mem;
	uint32_t id;
	uint32_t sm_count;
	uint32_t cc_major;
	uint32_t cc_minor;
	uint32_t max_threads_per_block;
	uint32_t max_warps_per_sm;
	uint32_t threads_per_warp;
	uint32_t max_blocks_per_sm;
	uint32_t regs_per_sm;
	uint32_t regs_per_block;
	uint32_t smem_per_sm;
	uint32_t smem_per_block;
	uint32_t smem_per_block_optin;   /* 0 when unknown */
	uint32_t reserved_smem_per_block;/* 0 when unknown */
	uint32_t name_len;
	uint32_t flags;                  /* CBN_DEVICE_UUID: the device's UUID follows the name
					  * (0 in older files) */
	char name[];
};

/* cbn_rec_cuda_device.flags: 16 bytes of UUID (CUpti_ActivityDevice5.uuid, as
 * nvidia-smi's GPU-... id) at the first 8-aligned offset after name's NUL,
 * inside h.size.  Two processes on one GPU give the same UUID. */
#define CBN_DEVICE_UUID 0x1u
#define CBN_DEVICE_UUID_OFF(name_len)                                                         \
	CBN_REC_ALIGN(offsetof(struct cbn_rec_cuda_device, name) + (name_len) + 1)

struct cbn_rec_cuda_context {
	struct cbn_rec h;
	uint32_t context;
	uint32_t device;
	uint32_t null_stream;
	uint32_t sm_count;               /* green contexts may have fewer; 0 unknown */
};

struct cbn_rec_cuda_memory {
	struct cbn_rec h;                /* h.flags: 1 = allocation, 2 = release */
	uint64_t ts;
	uint64_t address;
	uint64_t bytes;
	uint32_t device;
	uint32_t context;
	uint32_t stream;
	uint32_t correlation;
	uint16_t mem_kind;
	uint16_t reserved[3];
};

/* CUDA memory records: extension of cbn_rec_cuda_memory appended after it
 * (h.size says whether it is there; older files lack it). */
struct cbn_rec_cuda_memory_ext {
	uint64_t pool_address;           /* memoryPoolConfig.address, 0 when not from a pool */
	uint64_t pool_release_threshold;
	uint64_t pool_utilized;          /* memoryPoolConfig.utilizedSize */
	uint64_t pc;                     /* CUPTI's PC field (the API call site), 0 */
	uint8_t is_async;                /* cudaMallocAsync/cudaFreeAsync */
	uint8_t pool_type;               /* CUpti_ActivityMemoryPoolType: 0 none, 1 LOCAL, 2 IMPORTED */
	uint16_t reserved[3];
	uint64_t pool_size;              /* memoryPoolConfig.pool.size (LOCAL pools): bytes the
					  * pool held then, 0 */
};

enum cbn_mempool_op {                /* = CUpti_ActivityMemoryPoolOperationType */
	CBN_MEMPOOL_CREATED = 1, CBN_MEMPOOL_DESTROYED = 2, CBN_MEMPOOL_TRIMMED = 3,
};

/* CUPTI MEMORY_POOL (CUpti_ActivityMemoryPool3).  h.flags: enum cbn_mempool_op. */
struct cbn_rec_cuda_mempool {
	struct cbn_rec h;
	uint64_t ts;
	uint64_t address;                /* the pool */
	uint64_t size;                   /* bytes the pool holds now */
	uint64_t utilized;               /* of which handed out */
	uint64_t release_threshold;
	uint64_t min_bytes_to_keep;      /* TRIMMED */
	uint32_t device;
	uint32_t correlation;
	uint16_t pool_type;              /* 1 LOCAL, 2 IMPORTED */
	uint16_t managed;                /* isManagedPool */
	uint32_t reserved;
};

enum cbn_cuda_state {
	CBN_CUDA_STARTED = 1,            /* CUPTI subscribed and activities enabled */
	CBN_CUDA_UNAVAILABLE = 2,        /* CUPTI could not start: message says why */
	CBN_CUDA_FINISHED = 3,           /* final flush done: counters are final */
	CBN_CUDA_FORK_CHILD = 4,         /* forked child: GPU layer off */
	CBN_CUDA_YIELDED = 5,            /* the program's own CUPTI client took what h.flags
					  * says (1 callbacks, 2 activity); message: its name */
	CBN_CUDA_RESUMED = 6,            /* it let go of h.flags: ours again from ts */
};

/* The parts of CUPTI a YIELDED/RESUMED status names (h.flags), and that the
 * agent's guard passes between the program's client and the layer. */
#define CBN_CUPTI_API 1          /* callbacks: a subscription */
#define CBN_CUPTI_ACTIVITY 2     /* activity records: buffer callbacks and kinds */

/* Status and loss counters; the last one written wins (YIELDED and RESUMED
 * mark spans and leave the state alone).  message follows. */
struct cbn_rec_cuda_status {
	struct cbn_rec h;
	uint64_t ts;
	uint32_t state;                  /* enum cbn_cuda_state */
	int32_t cupti_error;             /* CUptiResult of the failing call, 0 if none */
	uint32_t cupti_version;
	uint32_t flush_timed_out;
	uint64_t dropped;                /* cuptiActivityGetNumDroppedRecords, summed */
	uint64_t zero_ts;                /* records with start == end == 0 (excluded) */
	uint64_t buffers;                /* activity buffers completed */
	uint64_t records;                /* activity records converted */
	uint32_t message_len;
	uint32_t driver_version;         /* cuDriverGetVersion (13000 = 13.0), 0 unknown */
	char message[];
};

/* --- Host memory (libcbottleneck_mem.so) --------------------------------- */

enum cbn_alloc_kind {
	CBN_ALLOC_HEAP = 1,              /* malloc family and C++ operator new (through malloc) */
	CBN_ALLOC_MMAP = 2,              /* anonymous mmap / mremap by the program */
	CBN_ALLOC_BRK = 3,               /* sbrk / brk by the program (glibc's own: not seen) */
};

enum cbn_alloc_fn {                  /* the function called */
	CBN_AFN_MALLOC = 1, CBN_AFN_CALLOC = 2, CBN_AFN_REALLOC = 3, CBN_AFN_POSIX_MEMALIGN = 4,
	CBN_AFN_ALIGNED_ALLOC = 5, CBN_AFN_MEMALIGN = 6, CBN_AFN_VALLOC = 7, CBN_AFN_PVALLOC = 8,
	CBN_AFN_FREE = 9, CBN_AFN_MMAP = 10, CBN_AFN_MUNMAP = 11, CBN_AFN_MREMAP = 12,
	CBN_AFN_SBRK = 13, CBN_AFN_BRK = 14, CBN_AFN_REALLOCARRAY = 15,
};

/*
 * A sampled allocation (every allocation with CBN_MEMF_EXACT).  In a MEMORY
 * chunk of the allocating thread.  The sampling is a Poisson process over
 * bytes with mean header.mem.rate: an allocation of size s was sampled with
 * probability 1 - exp(-s/rate), so it stands for s / (1 - exp(-s/rate))
 * bytes and 1 / (1 - exp(-s/rate)) allocations (size, not a per-site
 * average: unbiased when sizes vary).  pc[] are return addresses, innermost
 * first, starting at the caller of the hooked function.
 */
struct cbn_rec_mem_alloc {
	struct cbn_rec h;
	uint64_t ts;
	uint64_t addr;
	uint64_t size;                   /* bytes asked for */
	uint32_t tid;
	uint8_t kind;                    /* enum cbn_alloc_kind */
	uint8_t fn;                      /* enum cbn_alloc_fn */
	uint16_t nframes;
	uint64_t pc[];
};

/* The release of a block that has a MEM_ALLOC (free, realloc, munmap, ...),
 * in a MEMORY chunk of the releasing thread. */
struct cbn_rec_mem_free {
	struct cbn_rec h;
	uint64_t ts;
	uint64_t addr;
	uint64_t size;                   /* as its MEM_ALLOC said */
	uint32_t tid;
	uint8_t kind;                    /* enum cbn_alloc_kind */
	uint8_t fn;                      /* enum cbn_alloc_fn that released it */
	uint16_t reserved;
};

/* Every CBN_MEM_COUNTER_NS from the agent's background thread while
 * header.mem.state is ON, and once at exit.  EVENTS chunk. */
#define CBN_MEM_COUNTER_NS 10000000ull
struct cbn_rec_mem_counters {
	struct cbn_rec h;
	uint64_t ts;
	uint64_t rss;                    /* resident bytes (/proc/self/statm) */
	int64_t host_live;               /* header.mem.host_live then */
	int64_t mmap_live;
	uint64_t brk;                    /* program break above mem.brk_start */
	uint64_t allocs, frees, alloc_bytes;
};

/*
 * CBN_REC_UNPROFILED: written by the image that execs, when the image it
 * starts will not be able to write a session file of its own, so that the
 * report can name it instead of leaving its CPU silently out.
 */
enum cbn_unprofiled_reason {
	CBN_UNPROF_NO_ACCESS = 1,        /* its credentials cannot write the session
					  * directory (setuid/setgid before the exec) */
	CBN_UNPROF_SECCOMP = 2,          /* it inherits a seccomp filter of the program's:
					  * the agent stays inert in it (CBN_SANDBOXED) */
	CBN_UNPROF_SECURE = 3,           /* a set-user-ID or set-group-ID program: the
					  * loader ignores LD_PRELOAD for it */
};

struct cbn_rec_unprofiled {
	struct cbn_rec h;
	uint64_t ts;
	uint32_t pid;                    /* the process (an exec keeps it) */
	uint32_t reason;                 /* enum cbn_unprofiled_reason */
	uint32_t uid, euid;              /* credentials at the exec */
	uint32_t path_len;               /* bytes of path, without its NUL */
	uint32_t reserved;
	char path[];                     /* the program exec'd, NUL-terminated, padded to 8 */
};

/* Environment contract between launcher and agent (all optional except SESSION). */
#define CBN_ENV_SESSION "CBN_SESSION"     /* session directory (absolute) */
#define CBN_ENV_FREQ "CBN_FREQ"           /* sampling frequency, Hz */
#define CBN_ENV_DEPTH "CBN_DEPTH"         /* max frames per sample */
#define CBN_ENV_FILE_MB "CBN_FILE_MB"     /* per-process file size, MiB */
#define CBN_ENV_EXEC_SEQ "CBN_EXEC_SEQ"   /* internal: exec counter "pid:seq" */
#define CBN_ENV_QUIET "CBN_QUIET"         /* 1: agent prints nothing */
#define CBN_ENV_CUDA "CBN_CUDA"           /* 0: do not trace CUDA */
#define CBN_ENV_SIGNAL "CBN_SIGNAL"       /* sampling signal (cbn_signal.h), else chosen */
#define CBN_ENV_PERF "CBN_PERF_EVENTS"    /* 0: POSIX CPU timers, no perf events */
#define CBN_ENV_UNWIND_CHECK "CBN_UNWIND_CHECK" /* 1: compare every sample's unwind
						   * with a full one (slow; a test mode) */
#define CBN_ENV_FAST_UNWIND "CBN_FAST_UNWIND" /* 0: every stack by libunwind (no
						 * fastwalk.c: for comparisons) */
#define CBN_ENV_PREFETCH "CBN_PREFETCH" /* 0: no prefetch of the last sample's
					 * frames at a sample's start (comparisons) */
#define CBN_ENV_SHARE "CBN_SHARE_STACKS" /* 0: write every sample's stack whole
					  * (no CBN_SAMPLE_SHARED) */
#define CBN_ENV_KSTACKS "CBN_KERNEL_STACKS" /* 0: no kernel stacks; always: never
					     * park a thread's kernel event */
#define CBN_ENV_MEMORY "CBN_MEMORY"       /* "host,cuda", "host", "cuda": --memory */
#define CBN_ENV_MEMORY_RATE "CBN_MEMORY_RATE" /* mean bytes between sampled allocations */
/* Capture controls (docs/steps.md); any of them set: header.capture.mode CONTROLLED. */
#define CBN_ENV_SCHEDULE "CBN_SCHEDULE"   /* "wait=1,warmup=1,active=3,repeat=2,skip_first=0" */
#define CBN_ENV_DELAY "CBN_DELAY_NS"      /* recording starts this long after start */
#define CBN_ENV_DURATION "CBN_DURATION_NS" /* and stops this long after it started */
#define CBN_ENV_CAPTURE_RANGE "CBN_CAPTURE_RANGE" /* "api" (cbn_start/stop, cudaProfilerStart/
					  * Stop) or "nvtx:NAME[@DOMAIN]" */
#define CBN_ENV_TOGGLE_SIGNAL "CBN_TOGGLE_SIGNAL" /* a signal that toggles recording */
#define CBN_ENV_STEP "CBN_STEP"           /* NVTX/annotation ranges or marks whose name
					  * matches this POSIX ERE count as steps too */
#define CBN_ENV_RING "CBN_RING_NS"      /* ring mode: keep the last this-many ns */
#define CBN_ENV_OFFCPU "CBN_OFFCPU"     /* off-CPU sampler rate in Hz (--off-cpu); unset: off */
#define CBN_ENV_CTL "CBN_CTL"             /* 0: no control socket */
#define CBN_ENV_PYTHON "CBN_PYTHON"       /* 0: do not read Python frames (--python off) */
#define CBN_ENV_PYCALLS "CBN_PYCALLS"     /* 1: count Python calls exactly (--calls); 2: builtins too on 3.12+ (--calls=builtins) */
#define CBN_ENV_SANDBOXED "CBN_SANDBOXED" /* internal: set by the agent for an image
					  * exec'd under a seccomp filter: stay inert */
/* Each process's control socket: SESSION/ctl/<pid>.sock (dir 0700). */
#define CBN_CTL_DIR "ctl"
/* <session>/notes: what an agent has to say that its file cannot hold (a
 * process it could not profile, a control socket it could not open), one
 * line each, "pid N\tTEXT\n", appended with O_APPEND; never the program's
 * stderr.  The launcher folds them into the report (docs/format.md). */
#define CBN_NOTES_FILE "notes"

/* In the session directory, written by the launcher after the run: the kernel
 * functions that kernel stacks hit, one "START END NAME" line each (hex). */
#define CBN_KSYMS_FILE "kernel-symbols"

/* In the session directory, written by the launcher after the run: each
 * process's perf map (/tmp/perf-PID.map, "START SIZE name" lines, hex) with
 * the code of the jitdump files it mapped (JIT_REGION with CBN_JIT_JITDUMP)
 * appended as more such lines; at most CBN_PERFMAP_MAX bytes. */
#define CBN_PERFMAP_FILE "perf-%u.map"
#define CBN_PERFMAP_MAX (64u << 20)

#endif
