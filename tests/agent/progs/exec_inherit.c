/*
 * exec_inherit.c — what exec hands to the next image: with an argument, it
 * ignores SIGPROF, blocks it, and execs itself; the new image prints what it
 * inherited.  The agent keeps the real SIGPROF for itself, so it must hand
 * over the target's view (ignored, blocked), exactly as without it.
 */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sigaction sa;
	sigset_t s, cur;

	if (argc > 1) {
		signal(SIGPROF, SIG_IGN);
		sigemptyset(&s);
		sigaddset(&s, SIGPROF);
		sigprocmask(SIG_BLOCK, &s, NULL);
		execl("/proc/self/exe", argv[0], (char *)NULL);
		perror("execl");
		return 1;
	}
	sigprocmask(SIG_BLOCK, NULL, &cur);
	sigaction(SIGPROF, NULL, &sa);
	printf("exec_inherit: blocked=%d ignored=%d\n", sigismember(&cur, SIGPROF),
	       sa.sa_handler == SIG_IGN);
	return 0;
}
