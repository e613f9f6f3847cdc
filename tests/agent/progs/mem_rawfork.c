/*
 * mem_rawfork.c — a child made by the raw fork system call (no atfork
 * handler runs: the agent's and the hooks' do not know of it) allocates
 * 100,000 blocks of 1000 bytes and ends with the raw exit_group; the parent
 * made 1000 before and waits for it.  Under --memory the parent's file must
 * not count or record the child's: its header's counts stay near 1000.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile keep;

static void churn(int n)
{
	for (int i = 0; i < n; i++) {
		keep = malloc(1000);
		free(keep);
	}
}

int main(void)
{
	long pid;
	int st;

	churn(1000);
	pid = syscall(SYS_fork);
	if (pid < 0)
		return 1;
	if (pid == 0) {
		churn(100000);
		syscall(SYS_exit_group, 0);
	}
	if (waitpid((pid_t)pid, &st, 0) < 0 || !WIFEXITED(st))
		return 1;
	printf("child exit %d\n", WEXITSTATUS(st));
	return 0;
}
