/*
 * aside.c — run a function that needs a descriptor (perf_event_open, for a
 * thread's sampling and kernel-stack events) without touching the program's
 * descriptor table.
 *
 * POSIX gives open() the lowest free number: a descriptor of ours that exists
 * even for a few system calls, while another thread of the program opens a
 * file, socket or pipe, gives that thread another number than it gets
 * without us (tests/hostile: fd_race_threads).  So while the process has
 * more than one thread of the program, the function runs in a transient
 * process made with clone() without CLONE_FILES: the kernel gives it a copy
 * of the table, in which it opens, maps and closes; the mapping (shared
 * memory: CLONE_VM) keeps the event, the table goes away with it.
 *
 * It is a vfork of the calling thread (CLONE_VFORK: the caller waits until
 * it has exited, so the function may use the caller's stack, TLS and errno
 * as its own), with every signal blocked (no handler of the program's can run
 * on it), on a stack in the caller's frame.  It is not a thread of the
 * program (no CLONE_THREAD): /proc/self/task, the Threads: count and a
 * thread listing never show it; it is a child of the process for about
 * 30 us, with no exit signal (the program's wait() without __WALL never
 * sees it), reaped here.  The kernel checks a perf event opened from another
 * process against the program's credentials and dumpable flag: a program
 * that made itself non-dumpable is then sampled with POSIX timers.  A
 * single-threaded process runs the function directly.
 *
 * SIGNAL-SAFE: the sampling handler calls it (a thread's first sample, a
 * kernel event opened again after a park).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aside.h"
#include "floor.h"

#define ASIDE_STACK 8192

struct aside_call {
	int (*fn)(void *);
	void *arg;
	int ret;
};

static int aside_thread(void *p)
{
	struct aside_call *c = p;

	c->ret = c->fn(c->arg);
	return 0;
}

int aside_run(int (*fn)(void *), void *arg)
{
	unsigned char stack[ASIDE_STACK] __attribute__((aligned(16)));
	struct aside_call c = {fn, arg, -ENOSYS};
	sigset_t all, old;
	long tid;

	if (agent_program_alone())
		return fn(arg);
	sigfillset(&all);
	agent_syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, _NSIG / 8);
	tid = clone(aside_thread, stack + sizeof(stack), CLONE_VM | CLONE_VFORK, &c);
	if (tid < 0)
		c.ret = -errno;
	else
		/* it has released our memory (vfork); now gone: reap it (the
		 * program's own __WALL wait may have: then ECHILD) */
		while (agent_syscall(SYS_wait4, (pid_t)tid, NULL, __WCLONE, NULL) < 0 && errno == EINTR)
			;
	agent_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
	return c.ret;
}
