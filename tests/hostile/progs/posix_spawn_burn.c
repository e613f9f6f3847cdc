/*
 * posix_spawn_burn.c — posix_spawn()s the suite's helper, which burns 0.3 s
 * of CPU and prints, while the parent burns CPU too; then waits for it.
 * Must hold: the helper's output and status, as without the profiler.
 */
#include <spawn.h>
#include <sys/wait.h>

#include "hostile.h"

extern char **environ;

int main(void)
{
	char helper[PATH_MAX + 32];
	char *args[] = {"hostile_helper", "burn", "0.3", "spawned", NULL};
	pid_t pid;
	int st, e;

	print_views("start");
	snprintf(helper, sizeof(helper), "%s/hostile_helper", hostile_bindir());
	e = posix_spawn(&pid, helper, NULL, NULL, args, environ);
	if (e) {
		errno = e;
		die("posix_spawn");
	}
	burn_cpu_deep(0.3, 8);
	if (waitpid(pid, &st, 0) != pid)
		die("waitpid");
	say("helper: exited=%d status=%d\n", WIFEXITED(st), WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	print_views("end");
	return 0;
}
