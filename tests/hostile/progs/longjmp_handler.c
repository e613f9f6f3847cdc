/*
 * longjmp_handler.c — leaves a SIGUSR1 handler with siglongjmp (mask restored)
 * and with _longjmp (mask not restored), and loops setjmp/longjmp, thousands
 * of times with CPU burnt between.  Must hold: every jump lands, and the
 * signal mask is what the jump says, as without the profiler.
 */
#include <setjmp.h>

#include "hostile.h"

#define ROUNDS 2000

static sigjmp_buf senv;
static jmp_buf penv;
static volatile sig_atomic_t use_plain;

static void on_usr1(int sig)
{
	(void)sig;
	if (use_plain)
		_longjmp(penv, 2);
	siglongjmp(senv, 1);
}

static int usr1_blocked(void)
{
	sigset_t s;

	sigprocmask(SIG_BLOCK, NULL, &s);
	return sigismember(&s, SIGUSR1) == 1;
}

int main(void)
{
	struct sigaction sa;
	sigset_t u;
	volatile int sig_jumps = 0, plain_jumps = 0, loop_jumps = 0, blocked_after_plain = 0;
	volatile int bad_mask = 0;
	jmp_buf lenv;

	print_views("start");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&u);
	sigaddset(&u, SIGUSR1);

	for (volatile int i = 0; i < ROUNDS; i++) {
		burn_chunk((uint64_t)i);
		if (sigsetjmp(senv, 1) == 0) {
			raise(SIGUSR1);
		} else {
			sig_jumps++;
			bad_mask += usr1_blocked();
		}
	}
	use_plain = 1;
	for (volatile int i = 0; i < ROUNDS; i++) {
		burn_chunk((uint64_t)i);
		if (_setjmp(penv) == 0) {
			raise(SIGUSR1);
		} else {
			plain_jumps++;
			/* _longjmp left the handler's mask in place: SIGUSR1 blocked. */
			blocked_after_plain += usr1_blocked();
			sigprocmask(SIG_UNBLOCK, &u, NULL);
		}
	}
	for (volatile int i = 0; i < ROUNDS * 4; i++) {
		burn_chunk((uint64_t)i);
		if (setjmp(lenv) == 0)
			longjmp(lenv, 1);
		loop_jumps++;
	}
	say("siglongjmp: jumps=%d usr1_blocked_after=%d\n", sig_jumps, bad_mask);
	say("_longjmp: jumps=%d usr1_blocked_after=%d\n", plain_jumps, blocked_after_plain);
	say("longjmp loop: jumps=%d\n", loop_jumps);
	print_views("end");
	return 0;
}
