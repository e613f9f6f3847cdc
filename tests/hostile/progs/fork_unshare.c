/*
 * fork_unshare.c — a sandbox's pattern: fork, and in the child (one thread)
 * unshare(CLONE_NEWUSER) and setns() back into the parent's user namespace
 * (EPERM as an unprivileged child, EINVAL with threads), then burn CPU.  The
 * agent starts its helper threads again in a fork child (--off-cpu,
 * --memory); must hold: the child's calls end as without the profiler.
 */
#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>

#include "hostile.h"

int main(void)
{
	int st = 0, fd, r;
	pid_t pid;

	burn_cpu(0.1);
	fd = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		r = unshare(CLONE_NEWUSER);
		say("child unshare(CLONE_NEWUSER): %s\n", r == 0 ? "ok" : strerrorname_np(errno));
		r = fd >= 0 ? setns(fd, CLONE_NEWUSER) : -1;
		say("child setns(parent's user ns): %s\n", r == 0 ? "ok" : strerrorname_np(errno));
		burn_cpu(0.2);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	say("child: %s %d\n", WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	return 0;
}
