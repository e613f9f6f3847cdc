/*
 * sigpipe_death.c — writes into a pipe whose reader is gone: first with
 * SIGPIPE ignored (EPIPE, 100 times, CPU between), then with the default
 * action restored, which kills the process.  Must hold: EPIPE counts and
 * death by SIGPIPE (status 141), as without the profiler.
 */
#include "hostile.h"

int main(void)
{
	int p[2], epipe = 0;
	struct sigaction sa;

	print_views("start");
	if (pipe(p) < 0)
		die("pipe");
	close(p[0]);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPIPE, &sa, NULL);
	for (int i = 0; i < 100; i++) {
		burn_cpu(0.004);
		if (write(p[1], "x", 1) < 0 && errno == EPIPE)
			epipe++;
	}
	say("ignored: epipe=%d\n", epipe);
	print_signals("ignored");
	sa.sa_handler = SIG_DFL;
	sigaction(SIGPIPE, &sa, NULL);
	burn_cpu(0.05);
	say("writing with the default action\n");
	if (write(p[1], "x", 1) < 0)
		say("still alive: %s\n", strerrorname_np(errno));
	return 0;
}
