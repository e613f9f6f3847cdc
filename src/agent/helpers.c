/*
 * helpers.c — the agent's own threads (the background thread, the off-CPU
 * sampler, the control socket's): how they start, what the program can see
 * of them, and how they leave.  Normal context only.
 *
 * A helper is a pthread (its libc state must be real), but:
 *   - it has a descriptor table and fs_struct of its own (unshare CLONE_FILES
 *     and CLONE_FS, then every copied descriptor closed): what it opens (the
 *     /proc files it reads, the control socket and its connections) never
 *     takes a number from the program's table, a program that closes every
 *     descriptor cannot close ours, and setns() into a mount namespace still
 *     finds the program's fs_struct unshared;
 *   - it blocks every signal, so process-directed signals go to the
 *     program's threads;
 *   - it is not counted in glibc's count of live threads (__nptl_nthreads):
 *     the program's last thread, leaving through glibc, still ends the
 *     process with exit(0) (atexit handlers, stdio flushed) as without us.
 *     It leaves with the raw exit system call, never through glibc's
 *     thread exit (whose decrement could reach zero and call exit(0) on a
 *     thread whose descriptor table is not the program's); the next helper
 *     started joins it, which frees its stack;
 *   - it never keeps the process alive: every helper loop calls
 *     helpers_tick(), which every HELPERS_CHECK_NS reads /proc/self/stat (in
 *     the helper's own table) and, once no thread of the program is left
 *     (the main thread that left with a raw exit system call stays a zombie
 *     until the process ends), leaves with the exit system call and the
 *     code of the program's thread that ended last (the kernel gives the
 *     process the code of its last thread; glibc's exit(0) cannot be what
 *     the program missed there: a helper that starts while the program's
 *     last glibc-counted thread leaves calls it itself, helpers_enter);
 *   - its CPU time goes to header.overhead.threads_cpu_ns as it runs and when
 *     it ends, never to the program.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent.h"
#include "python.h"
#include "sigpath.h"
#include "../format/cbn_time.h"

#define HELPERS_CHECK_NS 20000000ull     /* liveness and CPU, at most this often */

/* Helpers created and not yet returned (threads_helpers_stop waits for 0),
 * and the hold that asks them to end. */
static _Atomic int helpers_live, helpers_hold;
/* Helpers counted by themselves: at their first and last instruction, so a
 * helper counted here is surely a task of the process (the liveness check
 * must never count a program thread as ours). */
static _Atomic int helpers_running;
/* Helpers that left (raw exit), to join: their stacks go back to glibc. */
#define HELPERS_MAX 16
static struct {
	pthread_t th;
	_Atomic int state;               /* 0 free, 1 running, 2 left (join it) */
} helpers_tab[HELPERS_MAX];
static __thread int helper_slot AGENT_TLS;

/* glibc's count of live threads (GLIBC_PRIVATE; NULL with another libc):
 * start_thread calls exit(0) when its decrement reaches zero. */
static unsigned int *nptl_nthreads;

/* The exit code of the program's thread that ended last: the raw exit
 * system call's (the syscall() interposer), 0 for a glibc thread exit. */
static _Atomic int last_exit_code;

/* Per helper (each has its own table): /proc/self/stat, kept open, and the
 * clocks of helpers_tick. */
static __thread int helper_stat_fd AGENT_TLS;
static __thread int helper_private AGENT_TLS;
static __thread uint64_t helper_next_check AGENT_TLS;
static __thread uint64_t helper_cpu_told AGENT_TLS;

void helpers_init(void)
{
	void *libc;

	if (nptl_nthreads)
		return;
	libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	if (libc) {
		nptl_nthreads = dlvsym(libc, "__nptl_nthreads", "GLIBC_PRIVATE");
		dlclose(libc);
	}
}

/* A thread of the program ended (code: the raw exit system call's, or 0 for
 * glibc's thread exit): the code the process ends with if it was the last. */
void helpers_note_exit(int code)
{
	atomic_store_explicit(&last_exit_code, code & 0xff, memory_order_relaxed);
}

/* Add the calling helper's CPU since the last report to the header. */
static void helpers_account(void)
{
	struct cbn_file_header *h = agent.w.hdr;
	uint64_t cpu = agent_thread_cpu();

	if (h && cpu > helper_cpu_told)
		atomic_fetch_add_explicit(&h->overhead.threads_cpu_ns, cpu - helper_cpu_told,
					  memory_order_relaxed);
	helper_cpu_told = cpu;
}

/* Close every descriptor of the table unshare just copied (its files are the
 * program's: a pipe the program closes must not stay open here). */
static void helpers_close_all(void)
{
	struct rlimit rl;
	long fd, max;

#ifdef SYS_close_range
	if (syscall(SYS_close_range, 0U, ~0U, 0U) == 0)
		return;
#endif
	/* Linux before 5.9: every number up to the limit (capped for the
	 * hard-unlimited case). */
	max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? (long)rl.rlim_cur
										  : 65536;
	if (max > 1 << 20)
		max = 1 << 20;
	for (fd = 0; fd < max; fd++)
		syscall(SYS_close, (int)fd);
}

int helpers_private(void)
{
	return helper_private;
}

/* First thing in every helper. */
static void helpers_enter(void)
{
	struct cbn_file_header *h = agent.w.hdr;

	atomic_fetch_add(&helpers_running, 1);
	/* Out of glibc's count, while still on the program's descriptor
	 * table: if that makes it zero, the program's last thread left through
	 * glibc while we were being created (so it did not call exit(0)): do
	 * what it would have, here, where its stdout still is. */
	if (nptl_nthreads && __atomic_sub_fetch(nptl_nthreads, 1, __ATOMIC_SEQ_CST) == 0)
		exit(0);
	helper_cpu_told = 0;
	helper_next_check = 0;
	helper_stat_fd = -1;
	helper_private = 0;
	if (h)
		atomic_fetch_add_explicit(&h->overhead.threads, 1, memory_order_relaxed);
	/* A kernel or a sandbox that refuses unshare (docker's default seccomp
	 * profile without CAP_SYS_ADMIN) leaves the helper on the program's
	 * table: each helper then keeps no descriptor (helpers_private()). */
	if (syscall(SYS_unshare, CLONE_FILES | CLONE_FS) == 0) {
		helpers_close_all();
		helper_private = 1;
		helper_stat_fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	}
}

/* Last thing in every helper: it leaves with the raw exit system call (the
 * code, if it was the last thread, is the program's last thread's). */
static __attribute__((noreturn)) void helpers_leave(void)
{
	helpers_account();
	if (helper_stat_fd >= 0)
		close(helper_stat_fd);
	helper_stat_fd = -1;
	atomic_store(&helpers_tab[helper_slot].state, 2);
	atomic_fetch_sub(&helpers_running, 1);
	atomic_fetch_sub(&helpers_live, 1);
	for (;;)
		syscall(SYS_exit, atomic_load(&last_exit_code));
}

/*
 * 1 when no thread of the program is left.  From /proc/self/stat: the
 * process's thread count (a main thread that left with the raw exit system
 * call or pthread_exit stays a zombie, counted, until the process ends; its
 * state is the line's), less the helpers that surely exist.  Other threads
 * (the CUDA layer's, a transient thread of aside.c) count as the program's:
 * never a false "gone".
 */
static int helpers_program_gone(void)
{
	char buf[1024], *p, state;
	long threads;
	ssize_t n;
	int i;

	if (helper_stat_fd < 0)
		return 0;
	n = pread(helper_stat_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* "PID (COMM) STATE ..."; the name may hold spaces and ')'. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return 0;
	state = p[2];
	/* field 20: num_threads */
	for (i = 2; p && i < 20; i++)
		p = strchr(p + 1, ' ');
	if (!p)
		return 0;
	threads = strtol(p + 1, NULL, 10);
	if (threads <= 0)
		return 0;
	return threads - atomic_load(&helpers_running) - (state == 'Z' || state == 'X') <= 0;
}

/*
 * The program has no thread left: end the process as its last thread would
 * have.  glibc calls exit(0) when the last thread it counts leaves through
 * it; helpers are not counted (and one that starts just as that happens
 * calls exit(0) itself: helpers_enter), so here a thread of the program left
 * with the raw exit system call, and the process ends with the code of its
 * last thread: every helper leaves the same way.
 */
static __attribute__((noreturn)) void helpers_end_process(void)
{
	helpers_leave();
}

void helpers_tick(void)
{
	uint64_t now = agent_now();

	if (now < helper_next_check)
		return;
	helper_next_check = now + HELPERS_CHECK_NS;
	helpers_account();
	if (helpers_program_gone())
		helpers_end_process();
}

struct raw_start {
	void *(*fn)(void *);
	void *arg;
	int slot;
};

static void *helpers_trampoline(void *p)
{
	struct raw_start s = *(struct raw_start *)p;

	agent_handoff_free(p);
	helper_slot = s.slot;
	helpers_enter();
	s.fn(s.arg);
	helpers_leave();
}

/* Join the helpers that left (their tids are cleared by the kernel: the join
 * returns at once and frees their stacks).  Under helpers_tab's slots. */
static void helpers_reap(void)
{
	int i, two;

	for (i = 0; i < HELPERS_MAX; i++) {
		two = 2;
		if (atomic_compare_exchange_strong(&helpers_tab[i].state, &two, 3)) {
			pthread_join(helpers_tab[i].th, NULL);
			atomic_store(&helpers_tab[i].state, 0);
		}
	}
}

/* Our own helper threads: never sampled, never wrapped, all signals blocked
 * so that process-directed signals go to the target's threads.  While a hold
 * is on (threads_helpers_held), none starts.  A thread under a seccomp filter
 * of the program's starts none: its children would inherit the filter. */
int threads_create_raw(pthread_t *th, void *(*fn)(void *), void *arg)
{
	struct raw_start *s;
	sigset_t all, old;
	int ret, i, zero;

	if (threads_init() < 0)
		return -ENOSYS;
	if (atomic_load(&helpers_hold) || sandbox_thread_filtered())
		return -EAGAIN;
	helpers_reap();
	for (i = 0; i < HELPERS_MAX; i++) {
		zero = 0;
		if (atomic_compare_exchange_strong(&helpers_tab[i].state, &zero, 1))
			break;
	}
	if (i == HELPERS_MAX)
		return -EAGAIN;
	if (!(s = agent_handoff_alloc(sizeof(*s)))) {
		atomic_store(&helpers_tab[i].state, 0);
		return -ENOMEM;
	}
	s->fn = fn;
	s->arg = arg;
	s->slot = i;
	atomic_fetch_add(&helpers_live, 1);
	sigfillset(&all);
	sigwrap_real_sigmask(SIG_SETMASK, &all, &old);
	ret = threads_real_create(&helpers_tab[i].th, NULL, helpers_trampoline, s);
	sigwrap_real_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		atomic_fetch_sub(&helpers_live, 1);
		atomic_store(&helpers_tab[i].state, 0);
		agent_handoff_free(s);
	} else if (th) {
		*th = helpers_tab[i].th;
	}
	return ret ? -ret : 0;
}

int threads_helpers_held(void)
{
	return atomic_load_explicit(&helpers_hold, memory_order_relaxed);
}

/*
 * Ask the helper threads to end and wait until their functions returned (each
 * checks the hold at its next wake-up: 2 ms, the off-CPU period, the control
 * socket's poll), 2 s at most.  Nests (one hold for all); each call is
 * followed by one threads_helpers_resume, except a seccomp filter's, which
 * keeps them stopped for good (sandbox.c).
 */
void threads_helpers_stop(void)
{
	struct timespec ms = {0, 1000000};
	int i;

	atomic_fetch_add(&helpers_hold, 1);
	for (i = 0; i < 2000 && atomic_load(&helpers_live) > 0; i++)
		nanosleep(&ms, NULL);
}

/* The hold is off: start again what the process runs. */
void threads_helpers_resume(void)
{
	if (atomic_fetch_sub(&helpers_hold, 1) != 1)
		return;
	offcpu_resume();
}

int threads_helpers_live(void)
{
	return atomic_load(&helpers_live);
}

/* In a forked child only the calling thread survives: no helper runs, and
 * no hold of the parent's applies (glibc set its thread count to 1). */
void helpers_after_fork_child(void)
{
	int i;

	atomic_store(&helpers_live, 0);
	atomic_store(&helpers_hold, 0);
	atomic_store(&helpers_running, 0);
	/* glibc reclaimed the stacks of the parent's other threads itself. */
	for (i = 0; i < HELPERS_MAX; i++)
		atomic_store(&helpers_tab[i].state, 0);
}
