/*
 * agent.c — life of the agent in one process image: configuration from the
 * environment, the session file and its header, start-up, fork and exit
 * handling, and the API the CUDA layer and the allocation hooks use
 * (agent_api.h).  It stands on the floor (floor.c: state, events, clock)
 * and starts the background thread (background.c) when it is needed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "alloc.h"
#include "capture.h"
#include "env.h"
#include "floor.h"
#include "jitmap.h"
#include "kernel.h"
#include "memline.h"
#include "modules.h"
#include "nvtx.h"
#include "python_calls.h"
#include "python_copy.h"
#include "python_find.h"
#include "python_walk.h"
#include "rank.h"
#include "sampler.h"
#include "sigwrap.h"
#include "stacks.h"
#include "threads.h"
#include "threads_create.h"
#include "timer.h"
#include "unwind.h"
#include "unwind_check.h"
#include "fastwalk.h"
#include "unwind_hold.h"
#include "agent_api.h"
#include "../format/cbn_time.h"

#define AGENT_DEFAULT_FREQ 99
#define AGENT_DEFAULT_DEPTH 128
#define AGENT_DEFAULT_FILE_MB 1024
#define AGENT_RING_FILE_MB 64
#define AGENT_INITIAL_FILE (CBN_HEADER_SIZE + 2 * CBN_CHUNK_SIZE)

static uint64_t agent_realtime(void)
{
	return cbn_clock_ns(CLOCK_REALTIME);
}

/* The running image, for a note written before agent.exe is read. */
static const char *agent_exe_name(void)
{
	static char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = '\0';
	return n > 0 ? exe : "?";
}

/*
 * Valgrind's client (its core and tool libraries are in LD_PRELOAD) runs on
 * Valgrind's simulated CPU: no sample there would be the program's, and the
 * unwinder's probes would fill Valgrind's report (the program's stderr)
 * with warnings about us.  1: the agent disabled itself, stay out.
 */
static int agent_valgrind_aside(void)
{
	const char *p = getenv("LD_PRELOAD");

	if (!p || !strstr(p, "/vgpreload_"))
		return 0;
	agent_disable("it runs under Valgrind, whose simulated CPU is not sampled: profile it "
		      "without Valgrind");
	return 1;
}

static void agent_mem_refuse(const char *why)
{
	struct cbn_mem_state *m = &agent.w.hdr->mem;

	snprintf(m->reason, sizeof(m->reason), "%s", why);
	m->reason_len = (uint32_t)strlen(m->reason);
	atomic_store(&m->state, CBN_MEM_REFUSED);
}

static long agent_env_long(const char *name, long def, long lo, long hi)
{
	const char *s = agent_getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	v = strtol(s, &end, 10);
	if (*end || v < lo || v > hi)
		return def;
	return v;
}

static double agent_env_freq(void)
{
	const char *s = agent_getenv(CBN_ENV_FREQ);
	char *end;
	double v;

	if (!s || !*s)
		return AGENT_DEFAULT_FREQ;
	v = strtod(s, &end);
	if (*end || !(v >= 1.0 && v <= 100000.0))
		return AGENT_DEFAULT_FREQ;
	return v;
}

/*
 * exec counter: CBN_EXEC_SEQ="pid:seq" names the image that set it.  An image
 * with the same pid is an exec of it (seq+1); any other pid starts at 0.
 */
static uint32_t agent_exec_seq(uint32_t pid)
{
	const char *s = agent_getenv(CBN_ENV_EXEC_SEQ);
	unsigned long p, q;

	if (s && sscanf(s, "%lu:%lu", &p, &q) == 2 && p == pid)
		return (uint32_t)q + 1;
	return 0;
}

static void agent_set_exec_seq(void)
{
	env_set_seq(agent.pid, agent.exec_seq);
}

static void agent_read_cmdline(struct cbn_file_header *h)
{
	ssize_t n;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	n = read(fd, h->cmdline, sizeof(h->cmdline) - 1);
	close(fd);
	if (n > 0)
		h->cmdline_len = (uint32_t)n;
}

/* Create <session>/<pid>.<seq>.cbp, trying later seqs if one exists (an image
 * whose environment lost our CBN_EXEC_SEQ). */
static int agent_open_file(int64_t parent_pid_file)
{
	struct cbn_file_header *h;
	char path[4200];
	int ret = -EEXIST, tries;

	for (tries = 0; tries < 64 && ret == -EEXIST; tries++) {
		snprintf(path, sizeof(path), "%s/%u.%u%s", agent.session, agent.pid, agent.exec_seq,
			 CBN_FILE_EXT);
		ret = writer_open(&agent.w, path, AGENT_INITIAL_FILE, agent.file_max);
		if (ret == -EEXIST)
			agent.exec_seq++;
	}
	if (ret)
		return ret;
	h = agent.w.hdr;
	if (agent.ring_ns) {
		agent.w.ring = 1;
		h->ring_ns = agent.ring_ns;
	}
	h->pid = agent.pid;
	h->ppid = (uint32_t)getppid();
	h->exec_seq = agent.exec_seq;
	h->max_depth = (uint32_t)agent.depth;
	h->period_ns = agent.period_ns;
	h->start_mono_ns = agent_now();
	h->start_real_ns = agent_realtime();
	h->parent_pid_file = parent_pid_file;
	atomic_store(&h->end_mono_ns, h->start_mono_ns);
	snprintf(h->exe, sizeof(h->exe), "%s", agent.exe);
	rank_header(h);
	agent_read_cmdline(h);
	agent_set_exec_seq();
	return 0;
}

/* A fork child's header.mem: what the parent's said about the heap it
 * inherits (state, flags, live bytes); its own activity starts at zero. */
static void agent_mem_inherit(const struct cbn_mem_state *pm)
{
	struct cbn_mem_state *m = &agent.w.hdr->mem;
	int64_t live = atomic_load(&pm->host_live);

	m->rate = pm->rate;
	m->brk_start = pm->brk_start;
	m->reason_len = pm->reason_len;
	memcpy(m->reason, pm->reason, sizeof(m->reason));
	atomic_store(&m->flags, atomic_load(&pm->flags));
	atomic_store(&m->host_live, live);
	atomic_store(&m->mmap_live, atomic_load(&pm->mmap_live));
	atomic_store(&m->host_peak, live > 0 ? (uint64_t)live : 0);
	atomic_store(&m->host_peak_ts, agent.w.hdr->start_mono_ns);
	atomic_store(&m->state, atomic_load(&pm->state));
}

/* The header's sampling fields as they stand (start, fork child). */
static void agent_header_sampling(void)
{
	struct cbn_file_header *h = agent.w.hdr;

	h->signo = (uint32_t)atomic_load(&agent.signo);
	h->timer_kind = agent.want_perf ? CBN_TIMER_PERF_CPU_CLOCK : CBN_TIMER_POSIX_CPU;
}

/* exit() and return from main: on_exit hands us the status.  On a thread
 * under a seccomp filter (sandbox.c) only memory is written: the record, the
 * header, no system call beyond the vDSO's clock. */
static void agent_on_exit(int status, void *arg)
{
	struct cbn_file_header *h = agent.w.hdr;
	struct cbn_rec_exit r;
	int quiet = agent_sandboxed();

	(void)arg;
	if (!h || agent.pid != (uint32_t)(quiet ? agent.pid : agent_syscall(SYS_getpid)))
		return;
	agent_tls.no_unwind++;
	if (!quiet) {
		sampler_exit_sample();
		python_calls_flush();
		python_exit();
		capture_exit();
		modules_scan(0);
		threads_end_all(0);
		agent_mem_counters(1);
	}
	memset(&r, 0, sizeof(r));
	r.h.type = CBN_REC_PROCESS_EXIT;
	r.h.size = sizeof(r);
	r.ts = agent_now();
	r.status = status;
	agent_event(&r, sizeof(r));
	atomic_store(&h->exit_code, status);
	atomic_store(&h->end_mono_ns, agent_now());
	atomic_store_explicit(&h->clean_exit, 1, memory_order_release);
	agent_tls.no_unwind--;
}

/*
 * _exit and _Exit run no exit handler.  What only the exit handler writes
 * and a process ending this way would lose: its exact Python call counts
 * (os._exit ends every child multiprocessing forks), its threads' measured
 * CPU, and its status.  Not in a vfork child
 * (the parent's memory), nor under a seccomp filter of the program's.  The
 * allocation hooks' library has its own (mem.c): each calls the next.
 */
__attribute__((visibility("default"), noreturn)) void _exit(int status)
{
	static void (*real)(int) __attribute__((noreturn));

	if (!real)
		*(void **)&real = agent_real("_exit");
	if (agent.w.hdr && !agent_tls.in_handler && !agent_sandboxed() &&
	    agent.pid == (uint32_t)agent_syscall(SYS_getpid)) {
		/* _exit may come from a signal handler that interrupted this
		 * thread inside a record's write: never wait long for its lock */
		atomic_store(&agent.w.ev_bounded, 1);
		agent_tls.no_unwind++;
		python_calls_quick_exit();
		sampler_exit_sample();
		threads_end_all(1); /* the threads' measured CPU */
		agent_tls.no_unwind--;
		/* the status, for a shell's (dash ends by _exit) and a forked
		 * child's: not an abnormal end; after exit()'s handlers, theirs */
		if (!atomic_load(&agent.w.hdr->clean_exit)) {
			atomic_store(&agent.w.hdr->exit_code, status);
			atomic_store(&agent.w.hdr->end_mono_ns, agent_now());
			atomic_store_explicit(&agent.w.hdr->clean_exit, 2, memory_order_release);
		}
	}
	if (real)
		real(status);
	agent_syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

__attribute__((visibility("default"), noreturn)) void _Exit(int status)
{
	_exit(status);
}

/* fork: hold our locks across it so the child finds them consistent. */
static int fork_quiet; /* the forking thread is under a seccomp filter */
static int fork_mods, fork_ev, fork_alloc; /* which locks the fork holds */

static int fork_ev_trylock(void)
{
	return pthread_mutex_trylock(&agent.w.ev_lock) == 0;
}

/*
 * A lock held across fork, so that the child finds what it guards whole;
 * the child makes each lock afresh.  The program's signal handler may fork
 * while its own thread holds one, or is inside its lock or unlock: there an
 * error-checking mutex has no owner yet (or none any more) and a blocking
 * lock waited forever (hostile.handler_fork_exec hung so, inside the events
 * lock's unlock, once in some 50 runs under load).  So it is tried for half
 * a second at most, then the fork goes on without it.  1 when taken.
 */
static int agent_fork_lock(int (*trylock)(void))
{
	struct timespec wait = {0, 100000};
	int tries;

	for (tries = 0; tries < 5000; tries++) {
		if (trylock())
			return 1;
		nanosleep(&wait, NULL);
	}
	return 0;
}

static void agent_fork_prepare(void)
{
	agent_tls.no_unwind++;
	fork_quiet = agent_sandboxed();
	if (!agent.w.hdr || fork_quiet)
		return;
	capture_before_fork();
	fork_mods = agent_fork_lock(modules_trylock);
	fork_ev = agent_fork_lock(fork_ev_trylock);
	fork_alloc = agent_fork_lock(agent_alloc_trylock);
	unwind_quiesce();
}

static void agent_fork_parent(void)
{
	if (agent.w.hdr && !fork_quiet) {
		unwind_release();
		if (fork_alloc)
			agent_alloc_unlock();
		if (fork_ev)
			pthread_mutex_unlock(&agent.w.ev_lock);
		if (fork_mods)
			modules_unlock();
	}
	agent_tls.no_unwind--;
}

/*
 * The child of fork(): only this thread survives and timers are not
 * inherited.  Leave the parent's file alone, start our own "<pid>.0.cbp"
 * (parent_pid_file = parent), replay the module map, re-arm this thread.
 */
static void agent_fork_child(void)
{
	uint32_t parent = agent.pid;
	int had = agent.w.hdr != NULL;
	struct cbn_mem_state pm;
	int ret;

	agent_tls.no_unwind--;
	agent_alloc_after_fork_child();
	if (fork_quiet) {
		/* The child has the filter too: the agent stays out of it (the
		 * parent's file stays mapped, unused: unmapping is a system call). */
		atomic_store(&agent.active, 0);
		writer_forget(&agent.w);
		return;
	}
	sigwrap_after_fork_child();
	nvtx_after_fork_child();
	unwind_after_fork_child();
	timer_after_fork_child();
	if (!had)
		return;
	atomic_store(&agent.active, 0);
	/* The child inherits the heap: its file starts from the parent's
	 * memory counters (the hooks' own atfork handler runs after this one). */
	memcpy(&pm, &agent.w.hdr->mem, sizeof(pm));
	writer_close(&agent.w);
	threads_after_fork_child();
	agent.pid = (uint32_t)agent_syscall(SYS_getpid);
	agent.exec_seq = 0;
	agent.main_thread = pthread_self();
	agent.forked_child = modules_have("libcbottleneck_cuda");
	agent_tls.chunk = NULL;
	agent_tls.backend = AGENT_BACKEND_NONE;
	agent_tls.perf_page = NULL; /* the parent's mapping is not inherited */
	agent_tls.mem_chunk = NULL;
	agent_tls.own_chunk = NULL;
	agent_mem_after_fork_child();
	ret = agent_open_file((int64_t)parent);
	if (ret) {
		agent_say("not profiled: cannot create the session file for a forked child");
		return;
	}
	agent_mem_inherit(&pm);
	agent_header_sampling();
	capture_after_fork_child();
	modules_after_fork_child();
	atomic_store(&agent.active, 1);
	jitmap_replay();
	sampler_thread_begin(0, NULL);
	python_after_fork_child();
	python_calls_after_fork_child();
}

/* The constructor's own CPU: header.overhead.init_cpu_ns (the loader's work
 * for our libraries before it, and the file's creation, are in the
 * process's CPU, not here: bench/startup.sh measures the whole). */
static uint64_t init_cpu0;

static void agent_init_done(void)
{
	uint64_t cpu = agent_thread_cpu();

	if (agent.w.hdr && cpu > init_cpu0)
		atomic_store(&agent.w.hdr->overhead.init_cpu_ns, cpu - init_cpu0);
	if (agent.w.hdr)
		atomic_store(&agent.w.hdr->start_thread_cpu_ns, init_cpu0);
}

static void agent_start(void);

/* The constructor: the agent's variables are read into its own store first
 * and leave the program's environment last (env.c), whatever became of the
 * start (a disabled agent's children are still followed). */
__attribute__((constructor)) static void agent_init(void)
{
	env_capture();
	if (!agent_getenv(CBN_ENV_SESSION) || agent_getenv(CBN_ENV_SANDBOXED))
		return;
	agent_start();
	env_scrub();
}

static void agent_start(void)
{
	const char *s = agent_getenv(CBN_ENV_SESSION), *q;
	double freq;
	ssize_t n;
	int ret;
	char why[120];

	if (!s || !*s)
		return; /* not under cbottleneck: stay inert */
	/* An image exec'd under a seccomp filter of the program's (sandbox.c):
	 * it has the filter too, so stay out, without a system call. */
	if (agent_getenv(CBN_ENV_SANDBOXED))
		return;
	init_cpu0 = agent_thread_cpu();
	agent_hooks_set(agent_mem_counters_now);
	q = agent_getenv(CBN_ENV_QUIET);
	agent.quiet = q && strcmp(q, "1") == 0;
	/*
	 * Loaded some other way than LD_PRELOAD (NVTX_INJECTION64_PATH in a
	 * process whose LD_PRELOAD was scrubbed): our sigaction and pthread
	 * wrappers would not be the ones the target calls, so stay inert.
	 */
	if (dlsym(RTLD_DEFAULT, "pthread_create") != (void *)threads_self_create) {
		agent.not_preloaded = 1;
		agent_say("not profiled: the agent was loaded without LD_PRELOAD (%s)",
			  agent_exe_name());
		return;
	}
	if (strlen(s) >= sizeof(agent.session) - 64)
		return; /* nowhere to write, nor to say so */
	strcpy(agent.session, s);
	freq = agent_env_freq();
	agent.period_ns = (uint64_t)(1e9 / freq);
	if (agent.period_ns < 10000)
		agent.period_ns = 10000;
	agent.depth = (int)agent_env_long(CBN_ENV_DEPTH, AGENT_DEFAULT_DEPTH, 1, CBN_MAX_FRAMES);
	q = agent_getenv(CBN_ENV_RING);
	agent.ring_ns = q && *q ? strtoull(q, NULL, 10) : 0;
	/* A ring reuses its file: bounded by default to AGENT_RING_FILE_MB. */
	agent.file_max = (uint64_t)agent_env_long(CBN_ENV_FILE_MB,
						  agent.ring_ns ? AGENT_RING_FILE_MB :
								  AGENT_DEFAULT_FILE_MB,
						  1, 1 << 20) << 20;
	q = agent_getenv(CBN_ENV_PERF);
	agent.want_perf = !(q && strcmp(q, "0") == 0);
	q = agent_getenv(CBN_ENV_SHARE);
	agent.no_share = q && strcmp(q, "0") == 0;
	q = agent_getenv(CBN_ENV_PREFETCH);
	agent.no_prefetch = q && strcmp(q, "0") == 0;
	timer_config();
	kernel_config();
	unwind_check_config();
	fastwalk_config();
	q = agent_getenv(CBN_ENV_MEMORY);
	agent.mem_host = q && strstr(q, "host") != NULL;
	agent.pid = (uint32_t)getpid();
	agent_pid_init();
	agent.exec_seq = agent_exec_seq(agent.pid);
	agent.main_thread = pthread_self();
	n = readlink("/proc/self/exe", agent.exe, sizeof(agent.exe) - 1);
	agent.exe[n > 0 ? n : 0] = 0;
	rank_init(); /* a rank's file goes to SESSION/rank-NNNNN */

	ret = agent_open_file(-1);
	if (ret) {
		char why[256];
		struct rlimit rl;

		/* cut to fit: a message, not a path to open */
		if (ret == -ENOMEM && getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
			snprintf(why, sizeof(why),
				 "RLIMIT_AS (%llu KiB) leaves no room for the session file: its first "
				 "MiB may take at most an eighth of the limit; raise ulimit -v",
				 (unsigned long long)(rl.rlim_cur >> 10));
		else
			snprintf(why, sizeof(why), "cannot create the session file in %.150s (%.60s)",
				 agent.session, strerror(-ret));
		agent_disable(why);
		return;
	}
	if (agent_valgrind_aside())
		return;
	/* The module snapshot first: the unwinder's first backtrace walks it
	 * (and the scan finds the Python interpreter: python_find.c). */
	python_config();
	python_calls_config();
	modules_init();
	jitmap_init();
	if (unwind_init(why, sizeof(why)) < 0) {
		/* Samples still carry the interrupted pc; say so in the header. */
		snprintf(agent.w.hdr->disabled_reason, sizeof(agent.w.hdr->disabled_reason), "%s", why);
		agent.w.hdr->disabled_reason_len = (uint32_t)strlen(agent.w.hdr->disabled_reason);
	}
	if (threads_init() < 0) {
		agent_disable("pthread_create not found");
		return;
	}
	ret = sigwrap_install(sampler_entry, why, sizeof(why));
	if (ret) {
		agent_disable(why);
		return;
	}
	agent.w.hdr->signo_first = (uint32_t)atomic_load(&agent.signo);
	agent_header_sampling();
	/* The hooks library is mapped by now (first in LD_PRELOAD) but its
	 * constructor runs after ours; it sets ON (or REFUSED) itself. */
	if (agent.mem_host && !dlsym(RTLD_DEFAULT, "cbn_mem_hooks_present"))
		agent_mem_refuse("libcbottleneck_mem.so is not preloaded (LD_PRELOAD was changed)");
	capture_init();
	atomic_store(&agent.active, 1);
	pthread_atfork(agent_fork_prepare, agent_fork_parent, agent_fork_child);
	on_exit(agent_on_exit, NULL);
	stacks_user_bounds(0, 0);
	if (sampler_thread_begin(0, NULL) < 0)
		agent_disable("cannot sample the main thread (no stack or timer for the handler)");
	agent_init_done();
}

/* --- agent_api.h ----------------------------------------------------------- */

#define AGENT_API __attribute__((visibility("default")))

AGENT_API int cbn_agent_write(const void *rec, size_t size)
{
	const struct cbn_rec *r = rec;

	if (!agent.w.hdr || !rec || size < sizeof(*r) || r->size != size)
		return -1;
	return writer_append_event(&agent.w, rec, size) ? -1 : 0;
}

/*
 * The calling thread's stack for the CUDA layer and the allocation hooks: its
 * native frames past skip, then its Python frames (CBN_PYW words, which take
 * at most part of max: python_stack_for).  LOCK-FREE past unwind_begin.
 */
static inline __attribute__((always_inline)) int agent_stack(uint64_t *pcs, int max, int skip)
{
	void *buf[CBN_MAX_FRAMES + 16];
	uint64_t py[CBN_MAX_FRAMES];
	int n, i, m = 0, npy, nmax = (int)(sizeof(buf) / sizeof(buf[0]));

	if (max > CBN_MAX_FRAMES)
		max = CBN_MAX_FRAMES;
	/* The unwinder's own frames below this one are direct reads too. */
	if (!unwind_begin_here((uintptr_t)__builtin_frame_address(0)))
		return 0;
	/* Counted as REENTRANT if our signal lands here: libunwind is not
	 * re-entrant on one thread (libunwind #425). */
	agent_tls.in_agent++;
	npy = python_stack_for(py, max, (uintptr_t)__builtin_frame_address(0));
	{
		/* The agent's own walk (fastwalk.h) from this very point: the
		 * pc after the lea, and the stack and frame registers there,
		 * which one asm statement cannot change in between. */
		uint64_t pc, sp, bp;
		int f = 0, want = max - npy + skip + 1 < nmax ? max - npy + skip + 1 : nmax;

		__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
				 : "=r"(pc), "=r"(sp), "=r"(bp));
		n = fastwalk_regs(pc, sp, bp, (uint64_t *)buf, want, &f, NULL);
		if (n <= 0)
			n = unwind_backtrace(buf, want);
		else if (unwind_check_on())
			unwind_check_walk((const uint64_t *)buf, n, want);
	}
	agent_tls.in_agent--;
	unwind_end();
	/* buf[0] is in the API function (this one is inlined there); then its
	 * caller's frames. */
	for (i = 1 + skip; i < n && m < max - npy; i++)
		pcs[m++] = (uint64_t)buf[i];
	memcpy(pcs + m, py, (size_t)npy * sizeof(uint64_t));
	return m + npy;
}

AGENT_API __attribute__((noinline)) int cbn_agent_backtrace(uint64_t *pcs, int max, int skip)
{
	if (max <= 0 || skip < 0)
		return 0;
	modules_refresh();
	return agent_stack(pcs, max, skip);
}

AGENT_API uint64_t cbn_agent_now(void)
{
	return agent_now();
}

AGENT_API void cbn_agent_enter(void)
{
	agent_tls.in_agent++;
}

AGENT_API void cbn_agent_leave(void)
{
	if (agent_tls.in_agent > 0)
		agent_tls.in_agent--;
}

AGENT_API int cbn_agent_forked_child(void)
{
	return agent.forked_child;
}

/* --- agent_api.h: the allocation hooks ------------------------------------- */

AGENT_API struct cbn_mem_state *cbn_agent_mem_state(void)
{
	if (!agent.mem_host || !agent.w.hdr || !atomic_load(&agent.active))
		return NULL;
	return &agent.w.hdr->mem;
}

AGENT_API void cbn_agent_mem_started(void)
{
	agent_mem_start();
}

/* rec into *slot, the calling thread's own chunk of kind (a new one when it
 * is full).  LOCK-FREE: normal code of that thread only. */
static int agent_write_own(struct cbn_chunk_header **slot, uint16_t kind, const void *rec,
			   size_t size, uint32_t tid)
{
	struct writer *w = &agent.w;
	struct cbn_chunk_header *c = *slot;
	void *dst;

	if (!w->hdr || size % 8 || size > CBN_CHUNK_SIZE - sizeof(*c))
		return -1;
	dst = c ? writer_reserve(c, (uint32_t)size) : NULL;
	if (!dst) {
		/* The sampler's path: lock-free handout, growth by try-lock.  A
		 * record lost is an allocation the profile never sees, so when
		 * another thread holds the growth lock (it finishes in a few
		 * system calls, unless it is preempted), yield, then sleep 50 us
		 * at a time, for at most about 20 ms; grow by 1 MiB. */
		struct timespec pause = {0, 50000};
		int tries;

		/* A thread the agent does not know (tid 0) still names its chunk. */
		if (!tid && !agent_sandboxed())
			tid = (uint32_t)agent_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0);
		writer_chunk_retire(w, c);
		c = writer_chunk_new(w, kind, tid);
		for (tries = 0; !c && tries < 500; tries++) {
			int ret = writer_grow_signal(w, 16 * CBN_CHUNK_SIZE);

			c = writer_chunk_new(w, kind, tid);
			if (c || (ret && ret != -EBUSY))
				break;
			if (tries < 100)
				sched_yield();
			else
				nanosleep(&pause, NULL);
		}
		*slot = c;
		if (!c)
			return -1;
		/* This thread writes the whole chunk soon: its pages in one call
		 * rather than a fault each (the file's pages are kept out of the
		 * program's memory until written: writer_grow). */
		if (w->populate && !agent_sandboxed())
			agent_syscall6(SYS_madvise, (long)c, CBN_CHUNK_SIZE, MADV_POPULATE_WRITE, 0, 0,
				       0); /* errno stays the program's */
		dst = writer_reserve(c, (uint32_t)size);
		if (!dst)
			return -1;
	}
	memcpy(dst, rec, size);
	writer_commit(c, (uint32_t)size);
	return 0;
}

AGENT_API int cbn_agent_mem_write(const void *rec, size_t size, uint32_t tid)
{
	return agent_write_own(&agent_tls.mem_chunk, CBN_CHUNK_MEMORY, rec, size, tid);
}

AGENT_API int cbn_agent_write_own(const void *rec, size_t size)
{
	const struct cbn_rec *r = rec;

	if (!rec || size < sizeof(*r) || r->size != size)
		return -1;
	return agent_write_own(&agent_tls.own_chunk, CBN_CHUNK_EVENTS, rec, size, agent_tls.tid);
}

AGENT_API __attribute__((noinline)) int cbn_agent_mem_backtrace(uint64_t *pcs, int max, int skip)
{
	if (max <= 0 || skip < 0 || agent_tls.in_agent ||
	    agent_tls.in_handler || agent_tls.in_sigpath || agent_tls.no_unwind)
		return 0;
	return agent_stack(pcs, max, skip);
}

AGENT_API int cbn_agent_mem_ours(uint64_t pc)
{
	return agent_is_self(pc) || unwind_in_copy((uintptr_t)pc);
}
