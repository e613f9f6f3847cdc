/*
 * timersig.h — shared by sigwaitinfo_timer.c, sigtimedwait_timer.c and
 * signalfd_timer.c: a program that blocks a timer signal and consumes it
 * synchronously.  Mode "prof": SIGPROF from setitimer(ITIMER_PROF, 20 ms),
 * which only advances while the process uses CPU; mode "alrm": SIGALRM from
 * setitimer(ITIMER_REAL, 20 ms).  No handler is installed for either.
 */
#include <sys/time.h>

#include "hostile.h"

#define TS_WANT 20 /* signals to receive */
/* The thread CPU seconds a program may spend waiting for them: 20 expiries
 * take 0.4 s of the process's CPU, but expiries that come while one is
 * still pending merge into it, and on a loaded machine (the suite beside
 * stress-ng) a profiled run saw 16 in 1 s where its plain run saw 20. */
#define TS_BUDGET 3.0
#define TS_INTERVAL_US 20000

struct timersig {
	int sig;       /* SIGPROF or SIGALRM */
	int which;     /* ITIMER_PROF or ITIMER_REAL */
	sigset_t set;  /* {sig} */
	int received;  /* signals consumed */
	int eintr;     /* waits that failed with EINTR */
	int not_timer; /* consumed signals whose si_code is not SI_KERNEL */
};

static void timersig_start(struct timersig *t, const char *mode)
{
	struct itimerval it = {{0, TS_INTERVAL_US}, {0, TS_INTERVAL_US}};

	memset(t, 0, sizeof(*t));
	if (!strcmp(mode, "prof")) {
		t->sig = SIGPROF;
		t->which = ITIMER_PROF;
	} else if (!strcmp(mode, "alrm")) {
		t->sig = SIGALRM;
		t->which = ITIMER_REAL;
	} else {
		die("mode must be prof or alrm, not %s", mode);
	}
	sigemptyset(&t->set);
	sigaddset(&t->set, t->sig);
	if (sigprocmask(SIG_BLOCK, &t->set, NULL) < 0)
		die("sigprocmask");
	if (setitimer(t->which, &it, NULL) < 0)
		die("setitimer");
}

/* A consumed signal: count it and check it came from the itimer. */
static void timersig_got(struct timersig *t, const siginfo_t *si)
{
	t->received++;
	if (si->si_code != SI_KERNEL)
		t->not_timer++;
}

/* Stop the timer and consume an instance that may have arrived meanwhile, so
 * the pending set printed at the end does not depend on timing. */
static void timersig_stop(struct timersig *t)
{
	struct itimerval off;
	struct timespec zero = {0, 0};

	memset(&off, 0, sizeof(off));
	setitimer(t->which, &off, NULL);
	while (sigtimedwait(&t->set, NULL, &zero) == t->sig)
		;
}

static void timersig_report(const struct timersig *t, int lost)
{
	say("%s: received=%d eintr=%d not_from_timer=%d lost=%d\n", sig_name(t->sig), t->received,
	    t->eintr, t->not_timer, lost);
}

/* Is t->sig pending for this process (as sigpending says)? */
HOSTILE_FN static int timersig_pending(const struct timersig *t)
{
	sigset_t p;

	sigpending(&p);
	return sigismember(&p, t->sig) == 1;
}
