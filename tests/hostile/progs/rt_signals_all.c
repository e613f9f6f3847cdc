/*
 * rt_signals_all.c — SA_SIGINFO handlers for every real-time signal
 * SIGRTMIN..SIGRTMAX; each is sent to the process with sigqueue and a value,
 * first one at a time, then all at once while blocked (with CPU burnt while
 * they wait), then twice each to check queueing.  Must hold: every signal
 * arrives exactly as often as sent, with its value, in order, as without
 * the profiler.
 */
#include "hostile.h"

#define MAXSIG 65

static volatile int count[MAXSIG], wrong_value[MAXSIG];
static volatile int order[4 * MAXSIG], norder;

static void on_rt(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	count[sig]++;
	if (si->si_code != SI_QUEUE || si->si_value.sival_int != sig * 100 + count[sig] % 2)
		wrong_value[sig]++;
	if (norder < 4 * MAXSIG)
		order[norder++] = sig;
}

/* "phase: once=31 wrong_value=0 missing=none extra=none in_order=yes" */
static void report(const char *phase, int want)
{
	char missing[512] = "", extra[512] = "";
	int ok = 0, bad = 0, sorted = 1;

	for (int s = SIGRTMIN; s <= SIGRTMAX; s++) {
		if (count[s] == want)
			ok++;
		else if (count[s] < want)
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
			         "%s%s", missing[0] ? "," : "", sig_name(s));
		else
			snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), "%s%s",
			         extra[0] ? "," : "", sig_name(s));
		bad += wrong_value[s];
	}
	for (int i = 1; i < norder; i++)
		if (order[i] < order[i - 1])
			sorted = 0;
	say("%s: as_sent=%d/%d wrong_value=%d missing=%s extra=%s ascending=%s\n", phase, ok,
	    SIGRTMAX - SIGRTMIN + 1, bad, missing[0] ? missing : "none", extra[0] ? extra : "none",
	    sorted ? "yes" : "no");
}

static void reset(void)
{
	for (int s = 0; s < MAXSIG; s++)
		count[s] = wrong_value[s] = 0;
	norder = 0;
}

int main(void)
{
	struct sigaction sa;
	sigset_t rt;
	union sigval v;

	print_views("start");
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_rt;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&rt);
	for (int s = SIGRTMIN; s <= SIGRTMAX; s++) {
		if (sigaction(s, &sa, NULL) < 0)
			die("sigaction %d", s);
		sigaddset(&rt, s);
	}
	/* The handler blocks all of them, so deliveries do not nest. */
	sa.sa_mask = rt;
	for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
		sigaction(s, &sa, NULL);
	print_signals("installed");

	/* One at a time, unblocked: delivered before sigqueue returns. */
	for (int s = SIGRTMIN; s <= SIGRTMAX; s++) {
		burn_cpu(0.005);
		v.sival_int = s * 100 + 1;
		if (sigqueue(getpid(), s, v) < 0)
			die("sigqueue");
	}
	report("one-at-a-time", 1);

	/* All at once, blocked, in descending order; delivered lowest first. */
	reset();
	sigprocmask(SIG_BLOCK, &rt, NULL);
	for (int s = SIGRTMAX; s >= SIGRTMIN; s--) {
		v.sival_int = s * 100 + 1;
		sigqueue(getpid(), s, v);
	}
	burn_cpu_deep(0.25, 8);
	sigprocmask(SIG_UNBLOCK, &rt, NULL);
	report("blocked-batch", 1);

	/* Twice each while blocked: real-time signals queue. */
	reset();
	sigprocmask(SIG_BLOCK, &rt, NULL);
	for (int k = 0; k < 2; k++)
		for (int s = SIGRTMIN; s <= SIGRTMAX; s++) {
			v.sival_int = s * 100 + (k == 0 ? 1 : 0);
			sigqueue(getpid(), s, v);
		}
	burn_cpu_deep(0.15, 8);
	sigprocmask(SIG_UNBLOCK, &rt, NULL);
	report("queued-twice", 2);
	print_views("end");
	return 0;
}
