/*
 * forkexec — a process tree: the parent forks, the child execs `split` (found
 * next to this executable) with the same SCALE, the parent burns SCALE seconds
 * in parent_work() and waits.  Usage: forkexec [SCALE].
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "burn.h"

__attribute__((noinline)) void parent_work(uint64_t ns)
{
	BURN_CPU(ns);
}

int main(int argc, char **argv)
{
	double scale = burn_arg(argc, argv, 1, 1.0);
	char self[PATH_MAX], arg[64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 16);
	char *slash;
	pid_t pid;
	int status;

	if (n <= 0) {
		perror("readlink /proc/self/exe");
		return 1;
	}
	self[n] = 0;
	slash = strrchr(self, '/');
	strcpy(slash + 1, "split");
	snprintf(arg, sizeof(arg), "%g", scale);
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		execl(self, "split", arg, (char *)NULL);
		perror(self);
		_exit(127);
	}
	parent_work((uint64_t)(scale * 1e9));
	if (waitpid(pid, &status, 0) < 0) {
		perror("waitpid");
		return 1;
	}
	printf("forkexec: done, child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
