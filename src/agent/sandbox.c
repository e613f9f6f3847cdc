/*
 * sandbox.c — the program's seccomp sandboxes, and the syscall() function.
 *
 * A thread that enters seccomp strict mode may make read, write, exit and
 * sigreturn only: any other system call kills the process (SIGKILL).  A
 * filter may kill, trap (SIGSYS) or fail whatever it likes, and with
 * SECCOMP_FILTER_FLAG_TSYNC it binds every thread of the process.  The
 * agent cannot know what a filter allows, so it makes no system call of its
 * own where one applies (it has no thread of its own to stop):
 *
 *   - prctl(PR_SET_SECCOMP) and syscall(SYS_seccomp / SYS_prctl) are
 *     interposed (glibc has no seccomp() function; libseccomp calls one of
 *     these).  Before the program's call, on its own thread, the agent stops
 *     that thread's sampler and kernel event (sampler_pause), marks it
 *     (agent_tls.sandboxed: its handler then counts a signal of ours as lost,
 *     CBN_LOST_SANDBOXED, and returns at once, without a system call) and
 *     makes the allocation hooks pass straight through on it.  With TSYNC it
 *     marks every thread (sandbox_all) and waits out handlers already past
 *     their check: the other threads' samplers stay armed but their
 *     handlers only count.  If the call fails, all of it is
 *     undone.
 *   - What the agent would do later on such a thread does not happen: a
 *     thread it creates is not followed (it inherits the filter), nor is a
 *     fork child's file made; an exec gets
 *     CBN_SANDBOXED=1 in its environment so that the agent stays inert in
 *     the new image, which inherits the filter too; the exit handlers write
 *     only memory.
 *   - header.guard says when and on which thread, and how widely; the
 *     report shows it.
 *
 * A sandbox entered with a raw system call of the program's own (inline
 * assembly, as Chromium's) is not seen: docs/agent.md section 14.
 *
 * syscall() is interposed for that, and to note the code of a thread that
 * ends with the raw exit system call (helpers.c needs it, and the thread's
 * end is recorded as pthread's cleanup would have).  It forwards every call
 * to the kernel itself, exactly as glibc's does (x86-64 only, as the
 * handler's entry).  Async-signal-safe: the agent's own code, the handler
 * included, calls it too.
 */
#include <errno.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "floor.h"
#include "nvtx.h"
#include "ranges.h"
#include "sampler.h"
#include "sandbox.h"
#include "threads.h"
#include "agent_api.h"

/* The allocation hooks' callbacks (cbn_agent_mem_callbacks). */
static void (*mem_sandbox_fn)(int all);
static void (*mem_thread_end_fn)(void);

/* A new thread of a filtered thread: the same (threads.c). */
void sandbox_thread_inherit(void)
{
	agent_tls.sandboxed = 1;
	if (mem_sandbox_fn)
		mem_sandbox_fn(0);
}

/* The allocation hooks' view of a thread's end (its pending counts) and of
 * a sandbox (pass straight through from now on; all: every thread). */
__attribute__((visibility("default"))) void cbn_agent_mem_callbacks(void (*thread_end)(void),
								     void (*sandbox)(int all))
{
	mem_thread_end_fn = thread_end;
	mem_sandbox_fn = sandbox;
}

/* The calling thread is about to end (threads.c's cleanup, the raw exit
 * system call): its pending allocation counts. */
void sandbox_mem_thread_end(void)
{
	if (mem_thread_end_fn && !agent_sandboxed())
		mem_thread_end_fn();
}

/* What a seccomp call asks for (enum cbn_seccomp_kind), 0 for anything that
 * does not enter a mode. */
static int sandbox_kind_seccomp(unsigned long op, unsigned long flags)
{
	if (op == SECCOMP_SET_MODE_STRICT)
		return CBN_SECCOMP_STRICT;
	if (op == SECCOMP_SET_MODE_FILTER)
		return (flags & SECCOMP_FILTER_FLAG_TSYNC) ? CBN_SECCOMP_FILTER_ALL : CBN_SECCOMP_FILTER;
	return 0;
}

static int sandbox_kind_prctl(unsigned long mode)
{
	if (mode == SECCOMP_MODE_STRICT)
		return CBN_SECCOMP_STRICT;
	if (mode == SECCOMP_MODE_FILTER)
		return CBN_SECCOMP_FILTER;
	return 0;
}

struct sandbox_undo {
	int was_sandboxed;
	int marked_all;                  /* this call marked every thread */
};

static void sandbox_enter(int kind, struct sandbox_undo *u)
{
	struct cbn_file_header *h = agent.w.hdr;
	int all = kind == CBN_SECCOMP_FILTER_ALL;
	uint32_t cur, zero = 0;

	u->was_sandboxed = agent_sandboxed();
	u->marked_all = 0;
	if (u->was_sandboxed && !all)
		return; /* already quiet: a second filter changes nothing for us */
	if (!u->was_sandboxed) {
		sampler_pause();
		agent_tls.sandboxed = 1;
		if (mem_sandbox_fn)
			mem_sandbox_fn(0);
	}
	if (all && !atomic_load(&agent.sandbox_all)) {
		/* Every thread comes under the filter: the agent has none of its
		 * own, only the handlers to wait out. */
		u->marked_all = 1;
		atomic_store(&agent.sandbox_all, 1);
		/* A handler already past its check on another thread. */
		sampler_quiesce();
		if (mem_sandbox_fn)
			mem_sandbox_fn(1);
	}
	if (!h)
		return;
	cur = atomic_load(&h->guard.seccomp);
	while ((uint32_t)kind > cur && !atomic_compare_exchange_weak(&h->guard.seccomp, &cur, kind))
		;
	if (atomic_compare_exchange_strong(&h->guard.seccomp_tid, &zero, agent_tls.tid ? agent_tls.tid
										   : agent_gettid()))
		atomic_store(&h->guard.seccomp_ns, agent_now());
	if (!u->was_sandboxed)
		atomic_fetch_add(&h->guard.seccomp_threads, 1);
	if (all)
		atomic_store(&h->guard.seccomp_threads, (uint32_t)threads_count());
}

/* The program's call failed: as before it. */
static void sandbox_undo(const struct sandbox_undo *u)
{
	struct cbn_file_header *h = agent.w.hdr;

	if (u->marked_all)
		atomic_store(&agent.sandbox_all, 0);
	if (u->was_sandboxed)
		return;
	agent_tls.sandboxed = 0;
	if (h && atomic_load(&h->guard.seccomp_threads))
		atomic_fetch_sub(&h->guard.seccomp_threads, 1);
	sampler_resume();
}

/* prctl(PR_SET_SECCOMP, mode, ...) through the prctl interposer
 * (threads.c): the real call in between. */
int sandbox_prctl(int (*real)(int, ...), unsigned long a[4])
{
	struct sandbox_undo u;
	int kind = sandbox_kind_prctl(a[0]), ret, e;

	if (!kind)
		return real(PR_SET_SECCOMP, a[0], a[1], a[2], a[3]);
	sandbox_enter(kind, &u);
	ret = real(PR_SET_SECCOMP, a[0], a[1], a[2], a[3]);
	e = errno;
	if (ret != 0)
		sandbox_undo(&u);
	errno = e;
	return ret;
}

/* A thread of the program ends with the raw exit system call: what glibc's
 * thread exit would have recorded (threads.c's cleanup does not run). */
static void sandbox_thread_exit(int code)
{
	(void)code;
	if (agent_sandboxed() || !agent_tls.tid || agent_tls.ended ||
	    agent_tls.pid != agent.pid)
		return;
	sandbox_mem_thread_end();
	if (sampler_thread_end()) {
		ranges_thread_end();
		nvtx_thread_end();
	}
}

__attribute__((visibility("default"))) long syscall(long nr, ...)
{
	struct sandbox_undo u;
	long a[6], ret;
	va_list ap;
	int i, kind = 0;

	/* Six arguments whatever the call takes, as glibc's syscall() does. */
	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_exit)
		sandbox_thread_exit((int)a[0]);
	else if (nr == SYS_seccomp)
		kind = sandbox_kind_seccomp((unsigned long)a[0], (unsigned long)a[1]);
	else if (nr == SYS_prctl && a[0] == PR_SET_SECCOMP)
		kind = sandbox_kind_prctl((unsigned long)a[1]);
	if (kind)
		sandbox_enter(kind, &u);
	ret = agent_syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (kind && (unsigned long)ret > -4096UL)
		sandbox_undo(&u);
	if ((unsigned long)ret > -4096UL) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}
