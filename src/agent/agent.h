/*
 * agent.h — the state every file of the preloaded agent (libcbottleneck.so)
 * shares: the process-wide configuration (struct agent) and the per-thread
 * TLS block the signal handler uses (struct agent_thread), both defined in
 * the floor (floor.c), and the attributes the agent's declarations carry.
 * Internal only.  Each file's functions are declared in its own header
 * (floor.h, timer.h, ...); what may run in the sampling signal handler is
 * listed in sigpath.h.
 */
#ifndef CBN_AGENT_H
#define CBN_AGENT_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "cbn_format.h"
#include "kstacks.h"
#include "writer.h"

#define AGENT_TLS __attribute__((tls_model("initial-exec")))

/* A thread's sampling period while its sampler waits outside a capture
 * window (sampler.c, timer.c): at its next sample after this much of its
 * CPU it sees a window that opened meanwhile.  No signal is sent to wake it:
 * one could interrupt a system call. */
#define AGENT_PARK_NS 10000000ull
#define AGENT_HIDDEN __attribute__((visibility("hidden")))

/* Bytes of libunwind's own thread-local block that the agent provides
 * (unwind.c; libunwind 1.6 uses 16). */
#define AGENT_UNW_TLS 64

/*
 * The process image's configuration.  The handler reads it on every thread:
 * the plain fields are set in the constructor (or a fork child) before any
 * sampler of the image is armed, so the arming system call orders them; what
 * changes while samplers run is atomic.
 */
struct agent {
	struct writer w;                 /* this process image's session file */
	_Atomic int active;              /* 1 once init succeeded (file open, signal ours) */
	_Atomic int signo;               /* sampling signal for threads armed from now on */
	int depth;                       /* frames per sample cap */
	int quiet;
	int want_perf;                   /* 0: CBN_PERF_EVENTS=0, POSIX timers only */
	int no_share;                    /* CBN_SHARE_STACKS=0: no CBN_SAMPLE_SHARED */
	int no_prefetch;                 /* CBN_PREFETCH=0: no prefetch of the last sample's frames */
	_Atomic int perf_refused;        /* errno of a refusal that holds for every thread:
					  * set by any thread's handler, relaxed (a hint) */
	uint32_t pid;                    /* pid the file belongs to */
	uint32_t exec_seq;
	uint64_t period_ns;
	uint64_t file_max;               /* bytes */
	uint64_t ring_ns;                /* --ring: keep the last this-many ns (0: off) */
	int forked_child;                /* see cbn_agent_forked_child() */
	int not_preloaded;               /* loaded by dlopen: stays inert */
	pthread_t main_thread;
	/* Every thread is under a seccomp filter of the program's (TSYNC): set
	 * and undone by sandbox.c, read by agent_sandboxed. */
	_Atomic int sandbox_all;
	/* Threads of the program besides the main one: each counted from
	 * before it is created (threads_create.c) until it unregisters
	 * (threads.c); aside.c reads it in signal context.  Too high is safe. */
	_Atomic int program_others;
	int mem_host;                    /* CBN_MEMORY asks for host memory */
	char session[4096];
	char exe[1024];
};

extern struct agent agent AGENT_HIDDEN;

enum agent_backend {
	AGENT_BACKEND_NONE = 0,
	AGENT_BACKEND_TIMER = 1,         /* timer_create(CLOCK_THREAD_CPUTIME_ID) */
	AGENT_BACKEND_PERF = 2,          /* perf_event_open(CPU_CLOCK), fd closed, page mapped */
};

/*
 * Per-thread state.  Initial-exec TLS: the handler reaches it without calling
 * __tls_get_addr (which may malloc).  Only the thread itself and its own
 * handler touch it, so "shared" means shared with a handler that can interrupt
 * normal code anywhere:
 *   - the flags below are volatile sig_atomic_t, each written by one side
 *     only (in_handler, in_sigpath by the handler; the others by normal
 *     code), so a read sees the last whole store;
 *   - everything else the handler reads or writes (chunk, tid, pid, sampled,
 *     the sampler, the CPU clock, the stack range) is changed by normal code
 *     only before the thread's sampler is armed, or with every signal blocked
 *     (sampler.c, timer_move_self, stacks.c): never concurrently.
 * Its size counts against the static TLS that glibc keeps for libraries
 * loaded later (the agent dlopened by NVTX_INJECTION64_PATH): at ~1.6 KiB
 * the agent's block is near the limit, and past it that dlopen fails
 * ("cannot allocate memory in static TLS block"; ctest agent.nosession).
 */
struct agent_thread {
	struct cbn_chunk_header *chunk;  /* current SAMPLES chunk, or NULL */
	uint32_t tid;                    /* 0: thread unknown to the agent */
	uint32_t pid;                    /* pid when armed; != agent.pid: foreign */
	volatile sig_atomic_t in_handler; /* inside sample_take: samples counted REENTRANT */
	volatile sig_atomic_t in_sigpath; /* inside the agent's part of the handler (sigpath.h) */
	volatile sig_atomic_t in_agent;  /* cbn_agent_enter nesting: samples counted REENTRANT */
	volatile sig_atomic_t no_unwind; /* fork or exit in progress: PC-only samples */
	volatile sig_atomic_t paused;    /* sampler stopped around an exec */
	volatile sig_atomic_t ended;     /* THREAD_END written */
	/* Under a seccomp mode or filter the program installed on this thread
	 * (sandbox.c): the agent makes no system call on it any more. */
	volatile sig_atomic_t sandboxed;
	/* Outside capture windows (capture.c) the sampler is parked: moved to
	 * the park period (AGENT_PARK_NS, slow) by the handler at the first
	 * sample after the window closed (or armed so at thread begin), and
	 * back by the handler at its first park-period sample inside a window.
	 * Handler and normal code with every signal blocked only. */
	volatile sig_atomic_t parked;
	int slow;                        /* the sampler runs at the park period */
	int fresh;                       /* a new thread: CPU clock and rusage start at 0 */
	int sampled;                     /* has had a sample (counted by backend) */
	char name[CBN_NAME_MAX];         /* the thread's name as last set (inherited at create) */

	/* The per-thread sampler (timer.c): the handler changes it too. */
	int backend;                     /* enum agent_backend */
	int signo;                       /* signal this thread's sampler raises */
	timer_t timer;                   /* AGENT_BACKEND_TIMER */
	int perf_fd;                     /* AGENT_BACKEND_PERF: fd number in si_fd (closed) */
	int perf_fd_prev;                /* the one before the signal moved, or -1 */
	void *perf_page;                 /* AGENT_BACKEND_PERF: the mapping that keeps it */
	uint64_t perf_base;              /* thread CPU time less the event's count (timer_cpu) */
	uint64_t cpu0;                   /* thread CPU time spent before this image */
	uint64_t cpu_last;               /* thread CPU time at the last sample (or arm) */
	uint64_t sys_last;               /* thread system time (getrusage) at the last sample */
	uint64_t carry;                  /* CPU ns not yet turned into weight */
	uint64_t sys_carry;              /* system ns read, not yet in a sample's split */
	uint64_t gap;                    /* thread CPU ns since the previous sample */
	uint32_t nweigh;                 /* samples weighed (timer_weigh) */
	/* Its kernel-stack event (kernel.c): opened by the handler at the first
	 * sample, closed at thread end and exec. */
	struct kstacks_ring kring;
	int ktried;                      /* kernel.c tried to open it */
	int kparked;                     /* closed while the thread stays in user mode */
	uint64_t kwin, kwin_k;           /* periods of CPU since the window began, of them kernel */
	uint64_t kcarry;                 /* kernel ns sampled, not yet in a sample's split */

	/* The handler's own stack (stacks.c). */
	char *stack_lo, *stack_hi;       /* usable range of the agent's stack, or NULL */
	void *stack_map;                 /* its mapping, guard page included */
	int kernel_ss_ours;              /* the kernel's altstack for this thread is ours */
	int app_ss_on;                   /* the program set an altstack of its own */
	stack_t app_ss;                  /* ... and this is it (the program's view) */

	/* Validated-page cache of unwind_access_mem, reset at each sample. */
	uintptr_t valid_page[4];
	int nvalid;
	/* The thread's own stack (stacks_user_bounds), 0 when unknown: the
	 * pages from the unwound stack pointer up to ustk_hi are live frames
	 * of this thread, which nobody unmaps while it runs, and the unwinder
	 * reads them directly; [live_lo, live_hi) is that span for the unwind
	 * in progress (unwind_begin), else 0. */
	uintptr_t ustk_lo, ustk_hi;
	uintptr_t live_lo, live_hi;

	/* libunwind's thread-local data and key (unwind.c). */
	unsigned char unw_tls[AGENT_UNW_TLS] __attribute__((aligned(16)));
	void *unw_key_val;
	unsigned unw_gen;                /* unwind_generation() its cache was built in */
	void *fw_rules;                  /* the handler's frame rules (fastwalk.c), or NULL */
	/* Unwinds in progress on this thread (unwind_begin nesting); the depth
	 * of the one whose libunwind blocked every signal (0: none), and the
	 * mask its first sigprocmask replaced (unwind.c, unwind_sigprocmask):
	 * restored when that unwind ends. */
	int16_t unw_depth;
	int16_t unw_masked;
	uint64_t unw_saved_mask;         /* the kernel's sigset (_NSIG / 8 bytes) */

	/* For the sample at the thread's end (sampler_end_sample): its start
	 * routine (threads.c) and its last committed sample. */
	uint64_t start_fn;
	struct cbn_rec_sample *last_sample;
	/* The latest full sample of the thread's chunk, whose outer frames the
	 * next samples share (CBN_SAMPLE_SHARED): its words, native ones, and
	 * its chunk's seq (a chunk recycled at the same address is another). */
	struct cbn_rec_sample *share_base;
	uint32_t share_seq;
	uint16_t share_n, share_nn;

	struct range_stack *ranges;      /* annotation ranges (ranges.c), heap */

	/* The allocation hooks' MEMORY chunk (libcbottleneck_mem.so through
	 * cbn_agent_mem_write): written by this thread's normal code only. */
	struct cbn_chunk_header *mem_chunk;

	/* Records of the CUDA layer's API callbacks (cbn_agent_write_own): an
	 * EVENTS chunk written by this thread's normal code only. */
	struct cbn_chunk_header *own_chunk;

	/* The names of Python code objects this thread met first
	 * (python_copy.c): an EVENTS chunk of its own, written by the handler
	 * or by normal code with every signal blocked. */
	struct cbn_chunk_header *names_chunk;
};

extern __thread struct agent_thread agent_tls AGENT_TLS AGENT_HIDDEN;

#endif
