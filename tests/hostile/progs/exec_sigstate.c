/*
 * exec_sigstate.c — sets up signal state that survives exec (SIGPROF and
 * SIGUSR2 ignored, SIGPROF and SIGUSR1 blocked, a SIGTERM handler that exec
 * resets), burns CPU, then execs itself; the new image prints what it
 * inherited and burns CPU.  Must hold: the same inherited state, as without
 * the profiler.
 */
#include "hostile.h"

static void on_term(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	sigset_t b;
	char self[PATH_MAX + 32];

	if (argc > 1 && !strcmp(argv[1], "stage2")) {
		print_views("after-exec");
		burn_cpu_deep(0.2, 8);
		print_views("end");
		return 0;
	}
	print_views("start");
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPROF, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&b);
	sigaddset(&b, SIGPROF);
	sigaddset(&b, SIGUSR1);
	sigprocmask(SIG_BLOCK, &b, NULL);
	burn_cpu_deep(0.2, 8);
	print_views("before-exec");
	snprintf(self, sizeof(self), "%s/exec_sigstate", hostile_bindir());
	execl(self, "exec_sigstate", "stage2", (char *)NULL);
	die("execl");
}
