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
 * thread made with clone() without CLONE_FILES: the kernel gives it a copy of
 * the table, in which it opens, maps and closes; the mapping (shared memory:
 * CLONE_VM) keeps the event, the table goes away with the thread.
 *
 * The thread is a vfork of the calling one (CLONE_VFORK: the caller waits
 * until it has exited, so the function may use the caller's stack, TLS and
 * errno as its own), with every signal blocked (no handler of the program's
 * can run on it), on a stack in the caller's frame.  It exists for about
 * 30 us (bench/startup.sh), counted in the process's threads meanwhile; a
 * single-threaded process runs the function directly.
 *
 * SIGNAL-SAFE: the sampling handler calls it (a thread's first sample, a
 * kernel event opened again after a park).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent.h"
#include "sigpath.h"

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

	if (threads_program_alone())
		return fn(arg);
	sigfillset(&all);
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, _NSIG / 8);
	tid = clone(aside_thread, stack + sizeof(stack),
		    CLONE_VM | CLONE_FS | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | CLONE_VFORK, &c);
	if (tid < 0)
		c.ret = -errno;
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
	return c.ret;
}
