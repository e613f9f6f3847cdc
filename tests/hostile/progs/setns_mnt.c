/*
 * setns_mnt.c — a single-threaded program keeps its mount namespace open,
 * enters a new one (unshare CLONE_NEWNS; in a new user namespace first when
 * it is not root), and goes back with setns(fd, CLONE_NEWNS), which the
 * kernel refuses (EINVAL) while another thread shares the process's
 * fs_struct.  Must hold: the same results as without the profiler.  Before:
 * setns failed with EINVAL under --off-cpu and --memory (their helper
 * threads shared the fs_struct).
 */
#include <fcntl.h>
#include <sched.h>

#include "hostile.h"

int main(void)
{
	int fd, r;

	print_views("start");
	burn_cpu_deep(0.3, 8);
	fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		skip("no /proc/self/ns/mnt");
	r = unshare(geteuid() == 0 ? CLONE_NEWNS : CLONE_NEWUSER | CLONE_NEWNS);
	if (r != 0)
		skip("unshare(CLONE_NEWNS) refused here: %s", strerrorname_np(errno));
	say("unshare: ok\n");
	burn_cpu(0.1);
	r = setns(fd, CLONE_NEWNS);
	say("setns(CLONE_NEWNS): %s\n", r == 0 ? "ok" : strerrorname_np(errno));
	close(fd);
	burn_cpu(0.1);
	print_views("end");
	return 0;
}
