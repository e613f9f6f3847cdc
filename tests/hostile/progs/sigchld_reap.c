/*
 * sigchld_reap.c — a SIGCHLD handler (SA_RESTART|SA_NOCLDSTOP) reaps children
 * with waitpid(WNOHANG) while the parent burns CPU; 20 forked children each
 * burn a little and exit with their index.  Must hold: all 20 reaped in the
 * handler with the right statuses, as without the profiler.
 */
#include <sys/wait.h>

#include "hostile.h"

#define KIDS 20

static volatile sig_atomic_t reaped, status_sum, handler_calls;

static void on_chld(int sig)
{
	int st, saved = errno;
	pid_t p;

	(void)sig;
	handler_calls++;
	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		reaped++;
		if (WIFEXITED(st))
			status_sum += WEXITSTATUS(st);
	}
	errno = saved;
}

int main(void)
{
	struct sigaction sa;
	sigset_t chld, old;
	double end;

	print_views("start");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (int i = 0; i < KIDS; i++) {
		pid_t p;

		burn_cpu(0.01);
		p = fork();
		if (p < 0)
			die("fork");
		if (p == 0) {
			burn_cpu(0.005);
			_exit(i);
		}
	}
	/* Burn until all are reaped (at most 5 s of CPU). */
	end = thread_cpu() + 5;
	while (thread_cpu() < end) {
		sigprocmask(SIG_BLOCK, &chld, &old);
		if (reaped == KIDS) {
			sigprocmask(SIG_SETMASK, &old, NULL);
			break;
		}
		sigprocmask(SIG_SETMASK, &old, NULL);
		burn_cpu(0.005);
	}
	say("reaped=%d status_sum=%d handler_ran=%s\n", (int)reaped, (int)status_sum,
	    handler_calls > 0 ? "yes" : "no");
	burn_cpu_deep(0.2, 8);
	print_views("end");
	return 0;
}
