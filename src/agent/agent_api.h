/*
 * agent_api.h — what the preloaded agent (libcbottleneck.so) exports to the CUDA
 * layer (libcbottleneck_cuda.so) and to the allocation hooks
 * (libcbottleneck_mem.so).  The CUDA layer finds these with
 * dlsym(RTLD_DEFAULT, ...) so that it works (and does nothing) without the
 * agent; the hooks link to the agent (DT_NEEDED).
 *
 * None of these may be called from a signal handler.  All are thread-safe.
 */
#ifndef CBN_AGENT_API_H
#define CBN_AGENT_API_H

#include <stddef.h>
#include <stdint.h>

#include "cbn_format.h"

/* Copy one complete record (rec->size == size, a multiple of 8, <= 60 KiB) into
 * this process's session file.  Returns 0, or -1 when there is no session, the
 * file is full (counted) or the process is a forked child whose file is gone. */
int cbn_agent_write(const void *rec, size_t size);

/* cbn_agent_write into the calling thread's own EVENTS chunk: no lock, so
 * threads that write often (the CUDA layer's API callbacks, on the program's
 * threads) never wait on one another or on the activity buffers' conversion.
 * Normal context only; the records of one thread stay in their order, those
 * of different threads are not ordered in the file. */
int cbn_agent_write_own(const void *rec, size_t size);

/* Capture the calling thread's stack as return addresses, outermost last,
 * skipping `skip` innermost frames (the caller's own frames).  Returns the
 * number of pcs written (0 if unwinding is unavailable). */
int cbn_agent_backtrace(uint64_t *pcs, int max, int skip);

/* cbn_agent_backtrace for a caller that captures the same call paths again and
 * again (the CUDA layer's launch stacks): when the calling thread's stack still
 * holds one of its recent captures' call path (the same frame address, every
 * return address still in its slot), its frames come back without unwinding
 * (pathcache.c).  Returns the frames from the caller's own on (*n of them),
 * valid until this thread's next call, and in *key a 64-bit hash of them
 * (never 0), the same for the same frames; NULL when it cannot (then
 * cbn_agent_backtrace). */
const uint64_t *cbn_agent_backtrace_cached(int *n, uint64_t *key);

/* How many cbn_agent_backtrace_cached calls unwound (their path was not in
 * the cache) since the start: the CUDA layer's CBN_CUDA_SELFTIME report. */
uint64_t cbn_agent_pathcache_misses(void);

/* CLOCK_MONOTONIC in nanoseconds: the session's one clock. */
uint64_t cbn_agent_now(void);

/* Mark the calling thread as inside profiler code (CUPTI callbacks, buffer
 * completion) so a sampling signal there is counted, not unwound through
 * CUPTI's locks.  Calls nest. */
void cbn_agent_enter(void);
void cbn_agent_leave(void);

/* 1 when the calling process was forked (without exec) from a profiled parent
 * that had already started the CUDA layer: such a child must not touch CUDA. */
int cbn_agent_forked_child(void);

/* --- CUPTI shared with the program (cupti_guard.c) ------------------------
 * The agent interposes libcupti's subscription and activity-registration entry
 * points.  When the program's own CUDA profiler takes CUPTI, the layer steps
 * aside (yield) before the program's call goes through, and takes CUPTI back
 * (resume) once the program lets go.  The hooks run on the program's thread,
 * under the guard's lock, with the thread marked inside the agent (so the
 * layer's own CUPTI calls pass straight through); they may call CUPTI. */

/* CBN_CUPTI_API, CBN_CUPTI_ACTIVITY: cbn_format.h. */

struct cbn_cupti_layer {
	/* The program is about to hold what (CBN_CUPTI_*): flush and give it
	 * up.  holder names the program's client; req/done are the buffer
	 * callbacks the program registered earlier (NULL: none yet), to be
	 * registered again after ours, so that its records reach it. */
	void (*yield)(int what, const char *holder, void *req, void *done);
	/* The program let go of what: take it back.  program_subscribed: the
	 * program still holds a subscription (then only activity comes back). */
	void (*resume)(int what, int program_subscribed);
	/* cuptiFinalize went through: CUPTI forgot everything, ours included. */
	void (*finalized)(void);
	/* The program registered a timestamp callback (CUPTI's clock from now
	 * on); also at attach when it did so before.  No lock may be taken. */
	void (*clock)(void *fn);
};

/* Register the layer's hooks (once, at its start).  Returns what the program
 * already holds (CBN_CUPTI_*: the layer starts without it) and its name in
 * holder. */
int cbn_agent_cupti_attach(const struct cbn_cupti_layer *layer, char *holder, size_t len);

/* --- For the allocation hooks (libcbottleneck_mem.so) ----------------------
 * The hooks run inside any malloc of the program, the agent's own included
 * (the agent mallocs while holding its module and event locks), so none of
 * the functions below takes a lock, allocates or calls the dynamic loader. */

struct cbn_mem_state;

/* header.mem of this process's session file when the session is open and
 * CBN_MEMORY asks for host memory, else NULL.  The pointer changes in a fork
 * child (a new file): call again from a pthread_atfork child handler that is
 * registered after the agent's (the hooks' constructor runs after the
 * agent's).  Not for the hooks' hot path. */
struct cbn_mem_state *cbn_agent_mem_state(void);

/* The hooks have set header.mem.state ON: keep the background thread running
 * so that it writes MEM_COUNTERS (starts it if needed).  Not from a hook. */
void cbn_agent_mem_started(void);

/* Append one complete record (rec->size == size, a multiple of 8) to the
 * calling thread's MEMORY chunk (chunk.tid = tid), taking a new chunk and
 * growing the file (try-lock) when needed.  LOCK-FREE, no allocation.
 * Returns 0, or -1 when there is no session or the file is full. */
int cbn_agent_mem_write(const void *rec, size_t size, uint32_t tid);

/* cbn_agent_backtrace for the hooks: no module rescan, and 0 frames when the
 * calling thread is already inside the agent or its unwinder (a malloc from
 * the agent itself) or unwinding is held (fork).  LOCK-FREE. */
int cbn_agent_mem_backtrace(uint64_t *pcs, int max, int skip);

/* 1 when pc lies in the agent or its private unwinder: an mmap the agent
 * makes for itself is not the program's memory. */
int cbn_agent_mem_ours(uint64_t pc);

/* The hooks' callbacks (no pthread key of the program's is taken for them):
 * thread_end() on a thread of the program that ends (returns, pthread_exit,
 * cancellation, the raw exit system call through syscall()) or execs, and
 * sandbox(all) on a thread that comes under a seccomp mode or filter of the
 * program's (all: every thread, a filter with TSYNC), after which the hooks
 * must make no system call on it.  Both called in normal context on that
 * thread.  From the hooks' constructor. */
void cbn_agent_mem_callbacks(void (*thread_end)(void), void (*sandbox)(int all));

/* --- Capture control (docs/steps.md) -------------------------------------
 * With capture controls (--schedule, --delay, --duration, --capture-range,
 * --toggle-signal, cbn_start/cbn_stop, `cbottleneck ctl`) the agent records
 * only inside windows; without them the one window is the whole run. */

/* 1 while recording (always 1 without capture controls). */
int cbn_agent_capture_active(void);

/* Open (on = 1) or close (on = 0) a window for cause (enum cbn_capture_cause).
 * Normal context, any thread.  Returns the state after the call. */
int cbn_agent_capture_set(int on, int cause);

/* fn(active) is called after every change of state, in the thread that made
 * it, outside the agent's locks (the CUDA layer enables or disables its CUPTI
 * activities there).  One listener; a second call replaces it. */
void cbn_agent_capture_listen(void (*fn)(int active));

/* 1 when --capture-range api: cudaProfilerStart/Stop open and close windows. */
int cbn_agent_capture_api(void);

/* --- For the MPI wrappers (libcbottleneck_mpi.so) --------------------------
 * Normal context; the wrappers call them from MPI_Init/Finalize and after
 * each call. */

struct cbn_rank_state;

/* header.rank of this process's session file, or NULL without a session.
 * The pointer changes in a fork child: call again rather than keep it. */
struct cbn_rank_state *cbn_agent_rank_state(void);

/* MPI_Comm_rank/size of MPI_COMM_WORLD at MPI_Init: taken (source
 * CBN_RANK_MPI) only when the environment named no rank.  The file stays
 * where it is (at the top of the session): the report takes the rank from
 * the header. */
void cbn_agent_rank_from_mpi(int rank, int world_size);

#endif
