/*
 * unshare_user.c — a single-threaded program burns CPU, then calls
 * unshare(CLONE_NEWUSER), which the kernel refuses (EINVAL) to a process
 * with more than one thread.  Must hold: the same result as without the
 * profiler (which must not add a thread to a single-threaded program).
 */
#include <sched.h>

#include "hostile.h"

int main(void)
{
	int r;

	print_views("start");
	burn_cpu_deep(0.4, 8);
	print_threads("before-unshare");
	r = unshare(CLONE_NEWUSER);
	say("unshare(CLONE_NEWUSER): %s\n", r == 0 ? "ok" : strerrorname_np(errno));
	burn_cpu(0.1);
	print_views("end");
	return 0;
}
