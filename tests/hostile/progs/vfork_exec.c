/*
 * vfork_exec.c — burns CPU, then 20 times vfork()s and execs the suite's
 * helper (which prints a line), and waits for it.  Must hold: every child runs
 * and exits 0, in order, as without the profiler (the vfork child runs on the
 * parent's memory and stack until it execs).
 */
#include <sys/wait.h>

#include "hostile.h"

int main(void)
{
	char helper[PATH_MAX + 32], word[32];
	volatile int ok = 0;

	print_views("start");
	snprintf(helper, sizeof(helper), "%s/hostile_helper", hostile_bindir());
	for (int i = 0; i < 20; i++) {
		pid_t pid;
		int st;

		burn_cpu_deep(0.02, 8);
		snprintf(word, sizeof(word), "vfork-child-%d", i);
		pid = vfork();
		if (pid < 0)
			die("vfork");
		if (pid == 0) {
			execl(helper, "hostile_helper", "echo", word, (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &st, 0) != pid)
			die("waitpid");
		ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	say("children=20 exited_0=%d\n", ok);
	print_views("end");
	return 0;
}
