/*
 * fork_burn.c — fork() without exec: parent and child both burn CPU, the child
 * writes a file and exits 5, the parent waits and writes its own file.  Must
 * hold: the same output, files and statuses, as without the profiler.
 */
#include <sys/wait.h>

#include "hostile.h"

static void put(const char *name, const char *text)
{
	FILE *f = fopen(name, "w");

	if (!f)
		die("fopen %s", name);
	fputs(text, f);
	fclose(f);
}

int main(void)
{
	pid_t pid;
	int st;

	print_views("start");
	burn_cpu(0.1);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		burn_cpu_deep(0.3, 8);
		print_views("child");
		put("child.txt", "written by the forked child\n");
		exit(5);
	}
	burn_cpu_deep(0.3, 8);
	if (waitpid(pid, &st, 0) != pid)
		die("waitpid");
	say("child: exited=%d status=%d\n", WIFEXITED(st), WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	put("parent.txt", "written by the parent\n");
	print_views("end");
	return 0;
}
