/*
 * signals_to_program.c — process-directed signals belong to the program's
 * threads: with SIGUSR1 blocked everywhere, kill(getpid(), SIGUSR1) stays
 * pending (sigpending shows it) until one worker unblocks it and takes it
 * in its handler; then main calls pthread_exit and the last worker waits in
 * sigwaitinfo for SIGUSR2, sent by a child process.  The profiler's helper
 * threads block every signal, so none of them can take one, nor keep one
 * pending.  Must hold: the same output.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "hostile.h"

static volatile int got_in;

static void on_usr1(int sig)
{
	(void)sig;
	got_in = 1;
}

static void *taker(void *arg)
{
	sigset_t s;

	(void)arg;
	burn_cpu(0.1);
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	say("taker: handler ran here: %s\n", got_in ? "yes" : "no");
	return NULL;
}

static void *waiter(void *arg)
{
	siginfo_t si;
	sigset_t s;
	pid_t p;
	int st;

	(void)arg;
	burn_cpu_deep(0.2, 8);
	p = fork();
	if (p < 0)
		die("fork");
	if (p == 0) {
		burn_cpu(0.05);
		kill(getppid(), SIGUSR2);
		_exit(0);
	}
	sigemptyset(&s);
	sigaddset(&s, SIGUSR2);
	while (sigwaitinfo(&s, &si) < 0 && errno == EINTR)
		;
	waitpid(p, &st, 0);
	say("waiter: got %s from the child\n", si.si_signo == SIGUSR2 ? "SIGUSR2" : "another");
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;
	sigset_t s, pend;

	signal(SIGUSR1, on_usr1);
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigaddset(&s, SIGUSR2);
	sigprocmask(SIG_BLOCK, &s, NULL);
	burn_cpu(0.1);
	kill(getpid(), SIGUSR1);
	sigpending(&pend);
	say("SIGUSR1 pending: %s\n", sigismember(&pend, SIGUSR1) ? "yes" : "no");
	if (pthread_create(&t1, NULL, taker, NULL))
		die("pthread_create");
	pthread_join(t1, NULL);
	if (pthread_create(&t2, NULL, waiter, NULL))
		die("pthread_create");
	say("main: pthread_exit\n");
	pthread_exit(NULL);
}
