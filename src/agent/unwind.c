/*
 * unwind.c — loads libunwind with dlopen(RTLD_LOCAL) and warms it up per thread.
 * Never a DT_NEEDED: libunwind.so.8 exports _Unwind_RaiseException & co., which
 * would then take over C++ exception handling in the target (cpu-sampling.md §3.1).
 */
#include <dlfcn.h>
#include <stddef.h>
#include <time.h>

#include "agent.h"

int (*unwind_backtrace)(void **buf, int size);

/*
 * fork() copies libunwind's internal mutexes (its rs-cache lock, taken on a
 * cache miss with signals blocked) in whatever state another thread left
 * them: a child forked while some handler was mid-unwind would deadlock on its
 * first cache miss.  So every unwind is counted, and fork's prepare handler
 * stops new unwinds (samples become PC-only) and waits for running ones.
 */
static _Atomic int unwind_running;
static _Atomic int unwind_hold;

/* SIGNAL-SAFE.  1: the caller may unwind and must call unwind_end. */
int unwind_begin(void)
{
	if (!unwind_backtrace || atomic_load_explicit(&unwind_hold, memory_order_acquire))
		return 0;
	atomic_fetch_add_explicit(&unwind_running, 1, memory_order_acq_rel);
	if (atomic_load_explicit(&unwind_hold, memory_order_acquire)) {
		atomic_fetch_sub_explicit(&unwind_running, 1, memory_order_release);
		return 0;
	}
	return 1;
}

void unwind_end(void)
{
	atomic_fetch_sub_explicit(&unwind_running, 1, memory_order_release);
}

/* fork prepare: no thread may be inside libunwind at the fork.  Bounded wait
 * (a handler blocked on the loader lock must not hang fork). */
void unwind_quiesce(void)
{
	struct timespec ts = {0, 100000};
	int i;

	atomic_store(&unwind_hold, 1);
	for (i = 0; i < 500 && atomic_load(&unwind_running) > 0; i++)
		nanosleep(&ts, NULL);
}

void unwind_release(void)
{
	atomic_store(&unwind_hold, 0);
}

/* In the child: only the forking thread exists and it was not unwinding. */
void unwind_after_fork_child(void)
{
	atomic_store(&unwind_running, 0);
	atomic_store(&unwind_hold, 0);
}

int unwind_init(void)
{
	void *h;

	if (unwind_backtrace)
		return 0;
	h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return -1;
	unwind_backtrace = (int (*)(void **, int))dlsym(h, "unw_backtrace");
	return unwind_backtrace ? 0 : -1;
}

/*
 * The first unw_backtrace in a thread mallocs libunwind's TLS block and its
 * trace cache (libunwind is dlopened, so its TLS is dynamic), and the first
 * call in the process runs tdep_init under a mutex (libunwind #331).  Neither
 * may happen inside the signal handler, so every thread calls this before its
 * timer is armed.
 */
__attribute__((noinline)) void unwind_warm(void)
{
	void *buf[32];

	if (unwind_begin()) {
		agent_tls.in_agent++;
		unwind_backtrace(buf, 32);
		agent_tls.in_agent--;
		unwind_end();
	}
}
