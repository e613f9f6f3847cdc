/*
 * sigpending_view.c — blocks SIGUSR1, SIGPROF and SIGRTMIN+3, raises each, and
 * checks that sigpending() lists them, burns CPU with them pending, then
 * installs handlers and unblocks.  Must hold: the pending set and one handler
 * call per signal at the unblock, as without the profiler.
 */
#include "hostile.h"

static volatile sig_atomic_t calls[65];

static void on_sig(int sig)
{
	calls[sig]++;
}

int main(void)
{
	int sigs[3] = {SIGUSR1, SIGPROF, SIGRTMIN + 3};
	struct sigaction sa;
	sigset_t set, pend;
	char buf[256];

	print_views("start");
	sigemptyset(&set);
	for (int i = 0; i < 3; i++)
		sigaddset(&set, sigs[i]);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (int i = 0; i < 3; i++) {
		burn_cpu(0.05);
		raise(sigs[i]);
	}
	sigpending(&pend);
	sigset_str(&pend, buf, sizeof(buf));
	say("pending after raise: %s\n", buf);
	burn_cpu_deep(0.3, 8);
	sigpending(&pend);
	sigset_str(&pend, buf, sizeof(buf));
	say("pending after burning: %s\n", buf);
	print_signals("pending");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, NULL);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	for (int i = 0; i < 3; i++)
		say("%s: handler calls after unblock=%d\n", sig_name(sigs[i]), (int)calls[sigs[i]]);
	burn_cpu(0.1);
	print_views("end");
	return 0;
}
