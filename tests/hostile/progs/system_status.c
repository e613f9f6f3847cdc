/*
 * system_status.c — burns CPU, then system("echo hi; exit 3") (glibc blocks
 * SIGCHLD and ignores SIGINT/SIGQUIT around it), and prints the status.
 * Must hold: "hi", exit status 3, and the signal state restored afterwards,
 * as without the profiler.
 */
#include <sys/wait.h>

#include "hostile.h"

int main(void)
{
	int st;

	print_views("start");
	burn_cpu_deep(0.3, 8);
	st = system("echo hi; exit 3");
	say("system: exited=%d status=%d\n", WIFEXITED(st), WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	burn_cpu(0.1);
	print_views("end");
	return 0;
}
