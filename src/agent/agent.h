/*
 * agent.h — state shared by the files of the preloaded agent (libcbottleneck.so):
 * the process-wide configuration, the per-thread TLS block the signal handler
 * uses, and the entry points each file offers the others.  Internal only.
 * What may run in the sampling signal handler is declared in sigpath.h.
 */
#ifndef CBN_AGENT_H
#define CBN_AGENT_H

#include <errno.h>
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
	uint64_t cpu0;                   /* thread CPU time spent before this image */
	uint64_t cpu_last;               /* thread CPU time at the last sample (or arm) */
	uint64_t sys_last;               /* thread system time (getrusage) at the last sample */
	uint64_t carry;                  /* CPU ns not yet turned into weight */
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

	/* For the sample at the thread's end (sampler_end_sample): its start
	 * routine (threads.c) and its last committed sample. */
	uint64_t start_fn;
	struct cbn_rec_sample *last_sample;

	struct range_stack *ranges;      /* annotation ranges (ranges.c), heap */

	/* The allocation hooks' MEMORY chunk (libcbottleneck_mem.so through
	 * cbn_agent_mem_write): written by this thread's normal code only. */
	struct cbn_chunk_header *mem_chunk;

	/* The names of Python code objects this thread met first
	 * (python_copy.c): an EVENTS chunk of its own, written by the handler
	 * or by normal code with every signal blocked. */
	struct cbn_chunk_header *names_chunk;
};

extern __thread struct agent_thread agent_tls AGENT_TLS AGENT_HIDDEN;

/*
 * floor.c: a system call made directly, as glibc's syscall() makes it (x86-64:
 * up to six arguments, each passed as a long; -1 with errno set on failure),
 * never through the syscall() the agent exports to the program (sandbox.c),
 * which would be a call up into a feature and a check on every call.
 * SIGNAL-SAFE.  agent_syscall6 returns the kernel's value (-errno on
 * failure) and leaves errno alone.
 */
#if !defined(__x86_64__)
#error "agent_syscall: x86-64 only"
#endif
static inline long agent_syscall6(long nr, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

static inline long agent_syscall_ret(long ret)
{
	if ((unsigned long)ret > -4096UL) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

#define agent_syscall(...) AGENT_SYSCALL_(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0)
#define AGENT_SYSCALL_(nr, a, b, c, d, e, f, ...)                                             \
	agent_syscall_ret(agent_syscall6((long)(nr), (long)(a), (long)(b), (long)(c), (long)(d), \
					 (long)(e), (long)(f)))

/* floor.c: 1 when the calling thread is under a seccomp mode or filter of
 * the program's (sandbox.c marks it): the agent then makes no system call on
 * it.  SIGNAL-SAFE (a thread flag and an atomic). */
static inline int agent_sandboxed(void)
{
	return agent_tls.sandboxed || atomic_load_explicit(&agent.sandbox_all, memory_order_relaxed);
}

/* floor.c: the agent's own text, set by the first module scan (modules.c)
 * before any sampler is armed; agent_is_self: pc lies in it (0 before).
 * SIGNAL-SAFE. */
void agent_self_set(uint64_t lo, uint64_t hi) AGENT_HIDDEN;
int agent_is_self(uint64_t pc) AGENT_HIDDEN;

/* floor.c: what every file calls, calling none of them (the state above,
 * events, the clock, the thread id, notes, disabling, the loader's lock). */
uint64_t agent_now(void) AGENT_HIDDEN;
void *agent_real(const char *name) AGENT_HIDDEN;
/* n bytes at src, or -1 when any is unmapped (never a fault).  Signal-safe. */
int agent_vmread(void *dst, uintptr_t src, size_t n) AGENT_HIDDEN;
int agent_event(const void *rec, size_t size) AGENT_HIDDEN;
void agent_disable(const char *why) AGENT_HIDDEN;
/* One line into the session's notes file (never the program's stderr);
 * normal context only. */
void agent_say(const char *fmt, ...) AGENT_HIDDEN __attribute__((format(printf, 1, 2)));
void agent_note(uint32_t flag) AGENT_HIDDEN;
uint32_t agent_gettid(void) AGENT_HIDDEN;
/* floor.c: what the files below the lifecycle ask of it, through the hook
 * agent.c registers at start-up (nothing before, nor in an inert agent).
 * agent_mem_last_point: the memory timeline's last point, now (before an
 * exec). */
void agent_hooks_set(void (*mem_now)(void)) AGENT_HIDDEN;
void agent_mem_last_point(void) AGENT_HIDDEN;

/* memline.c: the memory counters' timeline points the agent writes.
 * agent.c (init, fork, exit, the layers' API) is the lifecycle over it;
 * only the lifecycle calls these (the files below ask through
 * agent_mem_last_point). */
void agent_mem_start(void) AGENT_HIDDEN;
void agent_mem_counters(int rss) AGENT_HIDDEN;
void agent_mem_counters_now(void) AGENT_HIDDEN;
void agent_mem_after_fork_child(void) AGENT_HIDDEN;

/* unwind.c: the agent's private libunwind (its handler half: sigpath.h). */
int unwind_init(char *why, size_t len) AGENT_HIDDEN;
void unwind_thread_end(void) AGENT_HIDDEN;
/* unwind_begin for a backtrace of this thread in normal code, from an address
 * in the caller's frame (the unwinder's own frames below it are direct). */
int unwind_begin_here(uintptr_t frame) AGENT_HIDDEN;
/* The calling thread's return addresses from its caller on, each with its
 * frame's stack pointer (the address was pushed at sps[i] - 8).  Normal
 * context, slower than unwind_backtrace: for a capture to be cached. */
int unwind_backtrace_sp(uint64_t *ips, uintptr_t *sps, int max) AGENT_HIDDEN;
/* pathcache.c: the calling thread ends; its cached paths go. */
void pathcache_thread_end(void) AGENT_HIDDEN;
int unwind_in_copy(uintptr_t pc) AGENT_HIDDEN;


/* rank.c: the rank from the environment and the session's rank directory
 * (before the file is opened), and a new file's header.rank. */
void rank_init(void) AGENT_HIDDEN;
void rank_header(struct cbn_file_header *h) AGENT_HIDDEN;


/* stacks.c: the handler's per-thread stack and the sigaltstack interposer. */
int stacks_thread_begin(int fresh) AGENT_HIDDEN;
void stacks_user_bounds(uintptr_t here, size_t size) AGENT_HIDDEN;
void stacks_thread_end(void) AGENT_HIDDEN;

/* kernel.c: kernel stacks (their handler half: sigpath.h).  kernel_config
 * reads CBN_KERNEL_STACKS (constructor); thread begin forgets a ring a fork
 * child does not have (and a parked state); thread end (and exec) drains
 * and closes it. */
void kernel_config(void) AGENT_HIDDEN;
void kernel_thread_begin(struct agent_thread *t) AGENT_HIDDEN;
void kernel_thread_end(struct agent_thread *t) AGENT_HIDDEN;

/* timer.c: per-thread sampler backends (their handler half: sigpath.h). */
int timer_arm(struct agent_thread *t, int signo, int perf_now) AGENT_HIDDEN;
void timer_after_fork_child(void) AGENT_HIDDEN;
void timer_move_self(void) AGENT_HIDDEN;

/* sampler.c: thread begin/end around the handler (sigpath.h). */
int sampler_thread_begin(int fresh, const char *name) AGENT_HIDDEN;
int sampler_thread_end(void) AGENT_HIDDEN;
void sampler_pause(void) AGENT_HIDDEN;
void sampler_quiesce(void) AGENT_HIDDEN;
void sampler_resume(void) AGENT_HIDDEN;

/* threads.c: the live-thread table; threads_create.c: the pthread interposers. */
int threads_init(void) AGENT_HIDDEN;
void threads_register(pthread_t th, uint32_t tid, uint64_t cpu0, struct agent_thread *t)
	AGENT_HIDDEN;
int threads_each(void (*fn)(struct agent_thread *t, uint32_t tid, void *arg), void *arg)
	AGENT_HIDDEN;
void threads_unregister(pthread_t th) AGENT_HIDDEN;
void threads_end_all(void) AGENT_HIDDEN;
void threads_after_fork_child(void) AGENT_HIDDEN;
int threads_count(void) AGENT_HIDDEN;
uint32_t threads_lookup(pthread_t th) AGENT_HIDDEN;
void threads_program_add(int n) AGENT_HIDDEN;
extern int threads_self_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *)
	AGENT_HIDDEN;
int threads_real_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
	AGENT_HIDDEN;


/* alloc.c: the agent's own heap (mappings of its own, never the program's
 * allocator nor glibc's arenas); its lock around a fork. */
void agent_alloc_lock(void) AGENT_HIDDEN;
void agent_alloc_unlock(void) AGENT_HIDDEN;
void agent_alloc_after_fork_child(void) AGENT_HIDDEN;
void *agent_alloc(size_t n) AGENT_HIDDEN;
void *agent_calloc(size_t n, size_t size) AGENT_HIDDEN;
void *agent_realloc(void *p, size_t n) AGENT_HIDDEN;
void agent_free(void *p) AGENT_HIDDEN;
char *agent_strdup(const char *s) AGENT_HIDDEN;
/* A block (up to 64 bytes from a pool) one thread gives to a new one: freed
 * there without a malloc arena for it (alloc.c). */
void *agent_handoff_alloc(size_t n) AGENT_HIDDEN;
void agent_handoff_free(void *p) AGENT_HIDDEN;

/* sandbox.c: seccomp.  filtered: the calling thread is under a seccomp
 * mode or filter the program installed (the agent then makes no system
 * call on it); inherit: a new thread of such a thread. */
void sandbox_thread_inherit(void) AGENT_HIDDEN;
void sandbox_mem_thread_end(void) AGENT_HIDDEN;
int sandbox_prctl(int (*real)(int, ...), unsigned long a[4]) AGENT_HIDDEN;
void threads_name_event(uint32_t tid, const char *name) AGENT_HIDDEN;

/* capture.c: the capture windows (docs/steps.md).  capture_is_on: 1 while
 * recording (always, without controls); every recorder checks it (a load
 * of the header's gates, shared with the launcher: cbn_gates.h; signal-safe). */
extern _Atomic uint64_t *capture_word AGENT_HIDDEN;
static inline int capture_is_on(void)
{
	return !(atomic_load_explicit(capture_word, memory_order_relaxed) & 0xffffffffull);
}
extern _Atomic uint64_t capture_steps AGENT_HIDDEN;
void capture_init(void) AGENT_HIDDEN;
void capture_before_fork(void) AGENT_HIDDEN;
void capture_after_fork_child(void) AGENT_HIDDEN;
void capture_exit(void) AGENT_HIDDEN;
int capture_step(void) AGENT_HIDDEN;
int capture_is_step_name(const char *name) AGENT_HIDDEN;
void capture_nvtx_range(const char *domain, const char *name, int open) AGENT_HIDDEN;

/* sigwrap.c: sigaction/signal/sigmask interposers, choice of signal. */
int sigwrap_install(void (*entry)(int, siginfo_t *, void *), char *why, size_t len) AGENT_HIDDEN;
int sigwrap_unblock(int signo) AGENT_HIDDEN;
int sigwrap_before_exec(void) AGENT_HIDDEN;
void sigwrap_exec_failed(int changed) AGENT_HIDDEN;
void sigwrap_after_fork_child(void) AGENT_HIDDEN;
uint64_t sigwrap_app_blocked(void) AGENT_HIDDEN;
void sigwrap_set_app_blocked(uint64_t blocked) AGENT_HIDDEN;
int sigwrap_real_sigmask(int how, const sigset_t *set, sigset_t *old) AGENT_HIDDEN;
int sigwrap_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
	AGENT_HIDDEN;

/* env.c: the agent's variables, out of the program's view.  capture: the
 * constructor's first step (CBN_*, our LD_PRELOAD part); scrub: its last
 * (out of environ and /proc/self/environ); agent_getenv: a captured
 * variable (NULL: none); set_seq: the exec counter a child image gets;
 * child_size and for_child: the environment a child gets (envp with our
 * variables back; out has child_size entries, preload cap bytes). */
void env_capture(void) AGENT_HIDDEN;
void env_scrub(void) AGENT_HIDDEN;
const char *agent_getenv(const char *name) AGENT_HIDDEN;
void env_set_seq(uint32_t pid, uint32_t seq) AGENT_HIDDEN;
int env_child_size(char *const envp[]) AGENT_HIDDEN;
char *const *env_for_child(char *const envp[], char **out, char *preload, size_t cap,
			   int sandboxed) AGENT_HIDDEN;

/* linkmap.c: dl_iterate_phdr without the loader's lock (0 whole, -EAGAIN
 * while the loader changes the list, else the callback's value); the
 * dlclose interposer brackets the real call. */
struct dl_phdr_info;
int linkmap_walk(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg) AGENT_HIDDEN;
void linkmap_close_begin(void) AGENT_HIDDEN;
void linkmap_close_end(void) AGENT_HIDDEN;

/* modules.c: module map, snapshot for the unwinder, dlopen/dlclose. */
int modules_init(void) AGENT_HIDDEN;
void modules_scan(int force) AGENT_HIDDEN;
void modules_refresh(void) AGENT_HIDDEN;
int modules_pending(void) AGENT_HIDDEN;
void modules_lock(void) AGENT_HIDDEN;
void modules_unlock(void) AGENT_HIDDEN;
void modules_after_fork_child(void) AGENT_HIDDEN;
int modules_have(const char *basename_prefix) AGENT_HIDDEN;

/* nvtx.c */
void nvtx_thread_end(void) AGENT_HIDDEN;
void nvtx_after_fork_child(void) AGENT_HIDDEN;

/* ranges.c */
void ranges_thread_end(void) AGENT_HIDDEN;
int ranges_write(uint16_t kind, uint16_t source, uint64_t start, uint64_t end, uint32_t tid,
		 uint32_t depth, const char *domain, const char *name) AGENT_HIDDEN;

#endif
