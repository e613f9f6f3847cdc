/*
 * resethand_nodefer.c — SysV-style handlers installed with sigaction
 * SA_RESETHAND|SA_NODEFER for SIGUSR1 and SIGPROF: inside the handler the
 * signal must not be blocked and the disposition must already be back to
 * SIG_DFL; the handler re-installs itself.  200 raises each, CPU between.
 * Must hold: the same facts as without the profiler.
 */
#include "hostile.h"

struct seen {
	volatile sig_atomic_t calls, blocked_inside, not_reset_inside;
};

static struct seen seen_usr1, seen_prof;

static void install(int sig, void (*h)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL) < 0)
		die("sigaction");
}

static void on_sig(int sig)
{
	struct seen *s = sig == SIGUSR1 ? &seen_usr1 : &seen_prof;
	struct sigaction now;
	sigset_t mask;

	s->calls++;
	sigprocmask(SIG_BLOCK, NULL, &mask);
	if (sigismember(&mask, sig) == 1)
		s->blocked_inside++;
	sigaction(sig, NULL, &now);
	if (now.sa_handler != SIG_DFL)
		s->not_reset_inside++;
	install(sig, on_sig);
}

int main(void)
{
	print_views("start");
	install(SIGUSR1, on_sig);
	install(SIGPROF, on_sig);
	print_signals("installed");
	for (int i = 0; i < 200; i++) {
		burn_cpu(0.001);
		raise(SIGUSR1);
		burn_cpu(0.001);
		raise(SIGPROF);
	}
	say("USR1: calls=%d blocked_inside=%d not_reset_inside=%d\n", (int)seen_usr1.calls,
	    (int)seen_usr1.blocked_inside, (int)seen_usr1.not_reset_inside);
	say("PROF: calls=%d blocked_inside=%d not_reset_inside=%d\n", (int)seen_prof.calls,
	    (int)seen_prof.blocked_inside, (int)seen_prof.not_reset_inside);
	print_views("end");
	return 0;
}
