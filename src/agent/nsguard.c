/*
 * nsguard.c — unshare() and setns() into a user namespace, which the kernel
 * allows only to a process of one thread (EINVAL otherwise).  The agent's
 * helper threads (the background thread of --memory and capture controls,
 * the off-CPU sampler, the control socket's) would make a single-threaded
 * program fail there, where it succeeds without the profiler: unshare -U,
 * bwrap, a sandbox that forks and unshares in the child.  So the call first
 * holds the helpers (threads.c: they end at their next wake-up and are
 * waited for), makes the real call, and starts them again; the program's
 * errno and result are the real call's.
 *
 * Flags that need one thread: CLONE_NEWUSER (it implies CLONE_THREAD and
 * CLONE_FS), CLONE_THREAD, CLONE_SIGHAND, CLONE_VM; for setns, nstype
 * CLONE_NEWUSER or 0 (any namespace, the descriptor may be a user one).
 */
#include <errno.h>
#include <sched.h>
#include <time.h>

#include "agent.h"

#define NS_ONE_THREAD (CLONE_NEWUSER | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM)

typedef int (*unshare_fn)(int);
typedef int (*setns_fn)(int, int);

/*
 * The helpers' functions have returned, but the kernel takes a moment more
 * to drop an exiting thread from the process: while the real call says
 * EINVAL and the program has no thread of its own besides the caller, try
 * again for up to 100 ms.
 */
static int ns_call(unshare_fn u, setns_fn s, int a, int b)
{
	struct timespec ms = {0, 1000000};
	int ret, err, i;

	threads_helpers_stop();
	for (i = 0;; i++) {
		ret = u ? u(a) : s(a, b);
		err = errno;
		if (ret == 0 || err != EINVAL || i >= 100 || threads_count() > 1)
			break;
		nanosleep(&ms, NULL);
	}
	threads_helpers_resume();
	errno = err;
	return ret;
}

__attribute__((visibility("default"))) int unshare(int flags)
{
	static unshare_fn real;

	if (!real)
		real = (unshare_fn)agent_real("unshare");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (!(flags & NS_ONE_THREAD) || !threads_helpers_live())
		return real(flags);
	return ns_call(real, NULL, flags, 0);
}

__attribute__((visibility("default"))) int setns(int fd, int nstype)
{
	static setns_fn real;

	if (!real)
		real = (setns_fn)agent_real("setns");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if ((nstype && !(nstype & CLONE_NEWUSER)) || !threads_helpers_live())
		return real(fd, nstype);
	return ns_call(NULL, real, fd, nstype);
}
