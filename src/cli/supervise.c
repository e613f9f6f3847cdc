/*
 * supervise.c — the launcher beside the running program, as tini and
 * dumb-init stand beside theirs: every catchable signal the launcher gets is
 * the program's and is passed on once; the program runs in a process group
 * of its own, which gets the terminal, so what a terminal or a group sends
 * (Ctrl-C, Ctrl-\, `timeout`, the program's own killpg) reaches it directly
 * and never the launcher; a stop of the program is the launcher's stop (the
 * shell sees the job stopped), a continue of the launcher is the program's.
 * Processes the program leaves running when it ends are its own: not waited
 * for unless asked (--wait-all), never signalled.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"
#include "monitor.h"
#include "../format/cbn_time.h"

/* What the child's exec is set up with: the dispositions the launcher was
 * started with for the signals it changes (an ignored signal is made default
 * here so that signalfd sees it, and ignored again in the child). */
static struct sigaction sup_inherited[_NSIG];
static unsigned char sup_was_ignored[_NSIG];

int sup_signals_setup(sigset_t *old, int *sfd)
{
	struct sigaction dfl;
	sigset_t all;
	int sig;

	sigfillset(&all);
	if (sigprocmask(SIG_BLOCK, &all, old) < 0)
		return -errno;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (sig = 1; sig < _NSIG; sig++) {
		sup_was_ignored[sig] = 0;
		if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &sup_inherited[sig]) != 0)
			continue;
		/* Ignored (nohup, a background job's SIGINT): the kernel would
		 * drop it before signalfd; the program still starts with it
		 * ignored (sup_child_signals).  SIGCHLD ignored would also
		 * make the kernel reap our children itself. */
		if (sup_inherited[sig].sa_handler == SIG_IGN || sig == SIGCHLD) {
			sup_was_ignored[sig] = sup_inherited[sig].sa_handler == SIG_IGN;
			sigaction(sig, &dfl, NULL);
		}
	}
	*sfd = signalfd(-1, &all, SFD_CLOEXEC | SFD_NONBLOCK);
	return *sfd < 0 ? -errno : 0;
}

/* In the child before exec: the dispositions and mask the launcher got. */
void sup_child_signals(const sigset_t *old)
{
	int sig;

	for (sig = 1; sig < _NSIG; sig++)
		if (sup_was_ignored[sig] || sig == SIGCHLD)
			sigaction(sig, &sup_inherited[sig], NULL);
	sigprocmask(SIG_SETMASK, old, NULL);
}

/* The launcher's own dispositions back as they were (after the run). */
void sup_signals_restore(void)
{
	int sig;

	for (sig = 1; sig < _NSIG; sig++)
		if (sup_was_ignored[sig] || sig == SIGCHLD)
			sigaction(sig, &sup_inherited[sig], NULL);
}

/* The controlling terminal when the launcher is in its foreground group
 * (the program's group then takes it), else -1. */
int sup_tty_open(void)
{
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (tcgetpgrp(fd) != getpgrp()) {
		close(fd);
		return -1;
	}
	return fd;
}

/* In the child, signals still blocked: its own process group, which takes
 * the terminal (tcsetpgrp from a background group would raise SIGTTOU, which
 * is blocked here).  The parent does the same, whichever runs first. */
void sup_child_group(int tty)
{
	setpgid(0, 0);
	if (tty >= 0) {
		tcsetpgrp(tty, getpid());
		close(tty);
	}
}

struct sup {
	pid_t pid;                       /* the program */
	int tty;                         /* the terminal, -1 */
	int sfd;
	int stopped;                     /* the program is stopped (job control) */
	int quiet;
	int wait_all;
	int done;                        /* the program was reaped */
	struct spawn_result *res;
};

/* Give the terminal to the program's group again (it runs in the foreground
 * when the launcher does). */
static void sup_tty_give(struct sup *s)
{
	if (s->tty >= 0 && tcgetpgrp(s->tty) == getpgrp())
		tcsetpgrp(s->tty, s->pid);
}

static void sup_tty_take(struct sup *s)
{
	if (s->tty >= 0 && tcgetpgrp(s->tty) == s->pid)
		tcsetpgrp(s->tty, getpgrp());
}

/*
 * The program stopped (Ctrl-Z, SIGTTIN, a SIGSTOP sent to it): stop the
 * launcher with the same signal, so that the shell that runs the launcher
 * sees its job stopped, with the terminal back in the launcher's group.
 * When the shell continues the launcher (fg, bg), sup_continue continues
 * the program.  A launcher in an orphaned group is not stopped by the
 * kernel (POSIX): it runs on and the program stays stopped until continued.
 */
static void sup_stop_self(struct sup *s, int sig)
{
	sigset_t one;

	s->stopped = 1;
	sup_tty_take(s);
	if (sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU)
		sig = SIGSTOP;
	sigemptyset(&one);
	sigaddset(&one, sig);
	/* default action (stop) while unblocked for an instant */
	raise(sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	sigprocmask(SIG_BLOCK, &one, NULL);
}

static void sup_continue(struct sup *s)
{
	if (!s->stopped) {
		kill(s->pid, SIGCONT);
		return;
	}
	s->stopped = 0;
	sup_tty_give(s);
	killpg(s->pid, SIGCONT);
}

/* Pass one signal the launcher got to the program: the same number, and a
 * queued signal's value (sigqueue) with it. */
static void sup_forward(struct sup *s, const struct signalfd_siginfo *si)
{
	int sig = (int)si->ssi_signo;
	union sigval v;

	if (sig == SIGCONT) {
		sup_continue(s);
		return;
	}
	if (si->ssi_code == SI_QUEUE) {
		v.sival_ptr = (void *)(uintptr_t)si->ssi_ptr;
		if (sigqueue(s->pid, sig, v) == 0)
			return;
	}
	kill(s->pid, sig);
}

/* Reap what has ended; note the program's stops and its end. */
static void sup_reap(struct sup *s)
{
	struct rusage ru;
	pid_t w;
	int st;

	while ((w = wait4(-1, &st, WNOHANG | WUNTRACED | WCONTINUED, &ru)) > 0) {
		if (WIFSTOPPED(st)) {
			if (w == s->pid)
				sup_stop_self(s, WSTOPSIG(st));
			continue;
		}
		if (WIFCONTINUED(st))
			continue;
		s->res->user_ns += cbn_tv_ns(&ru.ru_utime);
		s->res->sys_ns += cbn_tv_ns(&ru.ru_stime);
		if (w == s->pid) {
			s->res->status = st;
			s->done = 1;
		}
	}
}

/* Signals that arrived for a program that has ended: nobody's. */
static void sup_drain(struct sup *s)
{
	struct signalfd_siginfo si;

	while (read(s->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		;
}

/* Wait for every descendant left to us (--wait-all): a signal stops the
 * wait (the report still comes); none is passed on to them. */
static void sup_wait_rest(struct sup *s)
{
	struct pollfd p = {s->sfd, POLLIN, 0};
	struct signalfd_siginfo si;

	for (;;) {
		struct rusage ru;
		pid_t w;
		int st;

		while ((w = wait4(-1, &st, WNOHANG, &ru)) > 0) {
			s->res->user_ns += cbn_tv_ns(&ru.ru_utime);
			s->res->sys_ns += cbn_tv_ns(&ru.ru_stime);
		}
		if (w < 0 && errno == ECHILD)
			return;
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return;
		while (read(s->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (si.ssi_signo == SIGCHLD)
				continue;
			if (!s->quiet)
				fprintf(stderr, "cbottleneck: stopped waiting for the program's background "
					"processes; their profiles may be incomplete\n");
			return;
		}
	}
}

/*
 * Wait for the program (pid, in its own group; tty: the terminal it was
 * given, or -1), passing on the signals read from sfd, while the monitor
 * (NULL: none) takes its turns at its deadlines and when its descriptors
 * are ready.  res gets the program's status and the CPU of every process
 * reaped.
 */
void sup_wait(pid_t pid, int tty, int sfd, const struct spawn_env *env, struct mon *mon,
	      struct spawn_result *res)
{
	struct sup s = {pid, tty, sfd, 0, env->quiet, env->wait_all, 0, res};
	struct pollfd p[64];
	struct signalfd_siginfo si;
	uint64_t next = mon ? mon_turn(mon, cli_now_ns(), NULL, 0) : 0;

	while (!s.done) {
		int timeout = -1, n;
		uint64_t now;

		p[0].fd = sfd;
		p[0].events = POLLIN;
		n = 1 + mon_fds(mon, p + 1, 63);
		if (next) {
			now = cli_now_ns();
			timeout = next > now ? (int)((next - now + 999999) / 1000000) : 0;
		}
		if (poll(p, (nfds_t)n, timeout) < 0 && errno != EINTR)
			break;
		while (!s.done && read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			/* The kernel's SIGCHLD is ours; one a process sent
			 * (SI_USER, SI_QUEUE) is the program's. */
			if (si.ssi_signo != SIGCHLD || si.ssi_code <= 0)
				sup_forward(&s, &si);
			if (si.ssi_signo == SIGCHLD)
				sup_reap(&s);
		}
		/* A SIGCHLD merged with one already read: reap anyway. */
		if (!s.done)
			sup_reap(&s);
		now = cli_now_ns();
		if (mon && (now >= next || n > 1))
			next = mon_turn(mon, now, p + 1, n - 1);
	}
	sup_tty_take(&s);
	sup_drain(&s);
	if (s.done && s.wait_all)
		sup_wait_rest(&s);
	sup_drain(&s);
}
