/*
 * sigwrap.c — keeps the sampling signal ours without the program noticing.
 *
 * The signal is a real-time one nobody handles at start (from SIGRTMAX-3 down;
 * CBN_SIGNAL chooses another), so a program that waits for SIGPROF or SIGALRM
 * gets exactly its own.  sigaction, signal & co., sigprocmask and
 * pthread_sigmask are interposed: the program sees its own disposition and
 * mask for a signal we own, while the kernel keeps our handler and the signal
 * open.  A program that installs a handler for it makes us move sampling to
 * another signal; the old one stays owned, and everything arriving on it that
 * is not one of our samples goes to the program's handler, while masks that
 * block it reach the kernel as the program asked (only a thread's own
 * sampling signal is kept open and its blocking emulated).  The APIs we only
 * watch (waits, SIGIO requests) are in sigwrap_watch.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "env.h"
#include "floor.h"
#include "sigwrap.h"
#include "timer.h"
#include "cbn_signal.h"

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef int (*sigmask_fn)(int, const sigset_t *, sigset_t *);

static sigaction_fn real_sigaction;
static sigmask_fn real_sigprocmask, real_pthread_sigmask;

/* The sampling handler (sampler.c's entry stub), given at install: the
 * sampler sits above this file and calls down into it (sigwrap_chain). */
static void (*sigwrap_entry)(int, siginfo_t *, void *);

/*
 * Signals we own: the sampling signal and those it moved away from.  For each,
 * the program's view of its disposition in two slots and an index: the
 * handler (any thread, signal context) reads act[cur] while a writer fills
 * the other slot and flips the index, holding spin with all signals blocked.
 */
#define SIGWRAP_OWNED 8

struct owned {
	_Atomic int sig;                 /* 0: free slot */
	struct sigaction act[2];
	_Atomic int cur;
	_Atomic int oneshot;             /* taken only to guard one-shot handlers */
};

static struct owned owned[SIGWRAP_OWNED];
static _Atomic int app_spin;
static pthread_mutex_t move_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Owned signals the program believes blocked in this thread (bit sig-1), and
 * signals for it that arrived meanwhile (re-sent when it unblocks them, as the
 * kernel would have delivered them).  The handler (sigwrap_chain) reads
 * app_blocked and sets bits of app_pending while normal code of the same
 * thread changes both: atomics, so that no update is torn or lost (a plain
 * `app_pending &= ~bit` interrupted between its load and store would drop a
 * bit the handler set).  The blocked bit is set before the kernel mask changes
 * and cleared before pending signals are flushed, so a signal arriving in
 * between is either held and flushed, or delivered at once.
 */
static __thread _Atomic uint64_t app_blocked AGENT_TLS;
static __thread _Atomic uint64_t app_pending AGENT_TLS;

/*
 * One-shot (SA_RESETHAND) handlers of the program running in this thread
 * (bit sig-1), the frame of the outermost one, and timer expiries that arrived
 * inside one before it re-installed itself.  The kernel would have run such a
 * signal with the default action (terminate): without us the window is a few
 * instructions long, with us our samples and our thread's CPU (which the
 * program's ITIMER_PROF counts) can put its next expiry in it.  Held until
 * the handler returns, then re-sent.
 */
static __thread _Atomic uint64_t oneshot_live AGENT_TLS;
static __thread _Atomic uint64_t oneshot_held AGENT_TLS;
static __thread uintptr_t oneshot_frame AGENT_TLS;

static uint64_t sigbit(int sig)
{
	return sig > 0 && sig <= 64 ? 1ull << (sig - 1) : 0;
}

static void sigwrap_resolve(void)
{
	if (!real_sigaction)
		real_sigaction = (sigaction_fn)agent_real("sigaction");
	if (!real_sigprocmask)
		real_sigprocmask = (sigmask_fn)agent_real("sigprocmask");
	if (!real_pthread_sigmask)
		real_pthread_sigmask = (sigmask_fn)agent_real("pthread_sigmask");
}

static struct owned *sigwrap_owned(int sig)
{
	int i;

	if (sig <= 0)
		return NULL;
	for (i = 0; i < SIGWRAP_OWNED; i++)
		if (atomic_load_explicit(&owned[i].sig, memory_order_acquire) == sig)
			return &owned[i];
	return NULL;
}

static void sigwrap_handler_act(struct sigaction *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sa_sigaction = sigwrap_entry;
	sigemptyset(&sa->sa_mask);
	/* SA_RESTART: interrupted reads/writes resume as without us.  Our
	 * samplers fire only while the thread runs in user mode (perf
	 * exclude_kernel) or at a tick while it burns CPU (POSIX CPU timers),
	 * so sleeps are not interrupted. */
	sa->sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
}

/* Read and/or replace the program's disposition for an owned signal.
 * SIGNAL-SAFE (raw sigprocmask, spin lock held with signals blocked). */
static void sigwrap_app(struct owned *o, const struct sigaction *act, struct sigaction *old)
{
	sigset_t all, saved;
	int cur;

	sigfillset(&all);
	agent_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &saved, _NSIG / 8);
	while (atomic_exchange_explicit(&app_spin, 1, memory_order_acquire))
		agent_syscall(SYS_sched_yield);
	cur = atomic_load(&o->cur);
	if (old)
		*old = o->act[cur];
	if (act) {
		o->act[!cur] = *act;
		atomic_store_explicit(&o->cur, !cur, memory_order_release);
	}
	atomic_store_explicit(&app_spin, 0, memory_order_release);
	agent_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &saved, NULL, _NSIG / 8);
}

static int sigwrap_is_free(int sig, struct sigaction *old)
{
	if (sigwrap_owned(sig) || real_sigaction(sig, NULL, old) < 0)
		return 0;
	return !(old->sa_flags & SA_SIGINFO) && old->sa_handler == SIG_DFL;
}

/* From SIGRTMAX-3 down to SIGRTMIN+10: clear of glibc's (32, 33), PAPI's,
 * hpcrun's and libmonitor's low real-time signals and of valgrind's SIGRTMAX
 * (sampler-safety.md §5).  A program that took all of those (moving us each
 * time) leaves the rest of the real-time range, then the standard signals
 * profilers use.  0 if none is free. */
static int sigwrap_pick(struct sigaction *old)
{
	static const int std[] = {SIGPROF, SIGVTALRM, SIGSTKFLT, SIGPWR};
	int sig;
	size_t i;

	for (sig = SIGRTMAX - 3; sig >= SIGRTMIN + 10; sig--)
		if (sigwrap_is_free(sig, old))
			return sig;
	for (sig = SIGRTMAX - 2; sig <= SIGRTMAX; sig++)
		if (sigwrap_is_free(sig, old))
			return sig;
	for (sig = SIGRTMIN + 9; sig >= SIGRTMIN; sig--)
		if (sigwrap_is_free(sig, old))
			return sig;
	for (i = 0; i < sizeof(std) / sizeof(std[0]); i++)
		if (sigwrap_is_free(std[i], old))
			return std[i];
	return 0;
}

/* Take sig: remember the program's disposition, install our handler
 * (oneshot: leave the kernel's as it is until a one-shot handler comes,
 * sigwrap_kernel_act). */
static int sigwrap_own_as(int sig, const struct sigaction *app, int oneshot)
{
	struct sigaction sa;
	int i;

	for (i = 0; i < SIGWRAP_OWNED; i++)
		if (!atomic_load(&owned[i].sig))
			break;
	if (i == SIGWRAP_OWNED)
		return -ENOSPC;
	owned[i].act[0] = *app;
	atomic_store(&owned[i].cur, 0);
	atomic_store(&owned[i].oneshot, oneshot);
	if (!oneshot) {
		sigwrap_handler_act(&sa);
		if (real_sigaction(sig, &sa, NULL) < 0)
			return -errno;
	}
	atomic_store_explicit(&owned[i].sig, sig, memory_order_release);
	return 0;
}

static int sigwrap_own(int sig, const struct sigaction *app)
{
	return sigwrap_own_as(sig, app, 0);
}

/* Started under a debugger?  gdb stops at every real-time signal but passes
 * SIGPROF silently. */
static int sigwrap_traced(void)
{
	char buf[1024];
	const char *p;
	ssize_t n;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strstr(buf, "TracerPid:");
	return p && atoi(p + 10) != 0;
}

int sigwrap_install(void (*entry)(int, siginfo_t *, void *), char *why, size_t len)
{
	struct sigaction old;
	const char *env = agent_getenv(CBN_ENV_SIGNAL);
	int sig, ret;

	sigwrap_entry = entry;
	sigwrap_resolve();
	if (!real_sigaction || !real_sigprocmask || !real_pthread_sigmask) {
		snprintf(why, len, "sigaction not found");
		return -ENOSYS;
	}
	if (env && *env) {
		sig = cbn_signal_parse(env);
		if (!sig || real_sigaction(sig, NULL, &old) < 0) {
			snprintf(why, len, "CBN_SIGNAL=%s is not a signal the agent can sample with", env);
			return -EINVAL;
		}
		agent_note(CBN_NOTE_SIG_FORCED);
	} else {
		sig = sigwrap_traced() && sigwrap_is_free(SIGPROF, &old) ? SIGPROF : sigwrap_pick(&old);
		if (!sig) {
			snprintf(why, len, "no free real-time signal for sampling (SIGRTMIN+10..SIGRTMAX-3 all handled)");
			return -EBUSY;
		}
	}
	ret = sigwrap_own(sig, &old);
	if (ret) {
		snprintf(why, len, "cannot install the sampling signal handler");
		return ret;
	}
	atomic_store(&agent.signo, sig);
	/*
	 * SIGIO, while the program leaves it at its default: the kernel sends it
	 * instead of a perf event's real-time signal that cannot be queued
	 * (RLIMIT_SIGPENDING), and its default kills.  The handler takes that
	 * one (timer_sigqueue_full); any other SIGIO goes to the program's
	 * disposition as for every owned signal.
	 */
	if (agent.want_perf && sig != SIGIO && real_sigaction(SIGIO, NULL, &old) == 0 &&
	    !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
		sigwrap_own(SIGIO, &old);
	return 0;
}

/*
 * The program installed a handler for the sampling signal: sample on another
 * from now on.  Threads move at their next sample (timer_rearm_signal); the
 * old signal stays owned, forwarding to the program's handler.
 */
static void sigwrap_move(void)
{
	struct sigaction old;
	int sig;

	pthread_mutex_lock(&move_lock);
	sig = sigwrap_pick(&old);
	if (sig && sigwrap_own(sig, &old) == 0) {
		sigwrap_unblock(sig);
		atomic_store(&agent.signo, sig);
		if (agent.w.hdr)
			agent.w.hdr->signo = (uint32_t)sig;
		/* This thread now; the others at their next sample. */
		timer_move_self();
	}
	pthread_mutex_unlock(&move_lock);
}

/*
 * exec keeps an ignored disposition and the signal mask, and resets handled
 * dispositions: the next image must inherit what the program believes it
 * set (SIG_IGN, blocked), not what we run with.  Returns what was changed,
 * for sigwrap_exec_failed to undo (bit i: owned slot i set to SIG_IGN; bit
 * 8: mask changed).
 */
int sigwrap_before_exec(void)
{
	struct sigaction a, ign;
	sigset_t s;
	int changed = 0, i;

	for (i = 0; i < SIGWRAP_OWNED; i++) {
		int sig = atomic_load(&owned[i].sig);

		if (!sig)
			continue;
		sigwrap_app(&owned[i], NULL, &a);
		if (!(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_IGN) {
			memset(&ign, 0, sizeof(ign));
			ign.sa_handler = SIG_IGN;
			if (real_sigaction(sig, &ign, NULL) == 0)
				changed |= 1 << i;
		}
	}
	if (app_blocked) {
		sigemptyset(&s);
		for (i = 1; i <= 64; i++)
			if (app_blocked & sigbit(i))
				sigaddset(&s, i);
		if (agent_syscall(SYS_rt_sigprocmask, SIG_BLOCK, &s, NULL, _NSIG / 8) == 0)
			changed |= 1 << 8;
	}
	return changed;
}

void sigwrap_exec_failed(int changed)
{
	struct sigaction sa;
	sigset_t s;
	int i;

	for (i = 0; i < SIGWRAP_OWNED; i++) {
		if (changed & (1 << i)) {
			sigwrap_handler_act(&sa);
			real_sigaction(atomic_load(&owned[i].sig), &sa, NULL);
		}
	}
	if (changed & (1 << 8)) {
		sigemptyset(&s);
		for (i = 1; i <= 64; i++)
			if (app_blocked & sigbit(i))
				sigaddset(&s, i);
		agent_syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &s, NULL, _NSIG / 8);
	}
}

/* Open signo in this thread; if it was blocked (a mask inherited across exec,
 * or from a thread we did not create), the program keeps seeing it so. */
int sigwrap_unblock(int signo)
{
	sigset_t s, old;
	int ret;

	if (!signo || !real_pthread_sigmask)
		return -1;
	sigemptyset(&s);
	sigaddset(&s, signo);
	ret = real_pthread_sigmask(SIG_UNBLOCK, &s, &old);
	if (ret == 0 && sigismember(&old, signo) == 1)
		app_blocked |= sigbit(signo);
	return ret;
}

int sigwrap_real_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	sigwrap_resolve();
	return real_pthread_sigmask ? real_pthread_sigmask(how, set, old) : ENOSYS;
}

int sigwrap_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	sigwrap_resolve();
	return real_sigaction ? real_sigaction(sig, act, old) : -1;
}

static void (*_Atomic installs_fn)(int, const struct sigaction *);

void sigwrap_watch_installs(void (*fn)(int sig, const struct sigaction *act))
{
	atomic_store(&installs_fn, fn);
}

/* A thread that held app_spin or move_lock at fork does not exist in the child. */
void sigwrap_after_fork_child(void)
{
	atomic_store(&app_spin, 0);
	pthread_mutex_init(&move_lock, NULL);
}

/* After the program's view of some owned signals went from blocked to open:
 * deliver what waited. */
static void sigwrap_flush_pending(uint64_t was_blocked)
{
	uint64_t opened = was_blocked & ~app_blocked & app_pending;
	int sig;

	for (sig = 1; opened && sig <= 64; sig++) {
		if (!(opened & sigbit(sig)))
			continue;
		opened &= ~sigbit(sig);
		app_pending &= ~sigbit(sig);
		agent_syscall(SYS_tgkill, (pid_t)agent_syscall(SYS_getpid), (pid_t)agent_syscall(SYS_gettid), sig);
	}
}

/*
 * A signal on an owned signal that is not one of our samples (kill, the
 * program's own timers, a sample of the signal we moved away from that was
 * still queued is dropped by timer_is_ours): do what the program's
 * disposition says.  SIGNAL CONTEXT.
 */
/*
 * SIGNAL-SAFE.  Is a one-shot handler of sig running below this frame in
 * this thread?  A signal frame and our entry lie between a nested delivery
 * and the handler's chain frame (over a kilobyte); a handler the program left
 * with longjmp leaves its bit set but no frame above the next delivery.
 */
static int sigwrap_oneshot_running(int sig)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);

	return (oneshot_live & sigbit(sig)) && here + 512 < oneshot_frame;
}

void sigwrap_chain(int sig, siginfo_t *si, void *uc)
{
	struct owned *o = sigwrap_owned(sig);
	struct sigaction a;
	sigset_t old;
	int masked = 0, oneshot = 0;
	sig_atomic_t in_sigpath;

	if (!o)
		return;
	if (app_blocked & sigbit(sig)) {
		app_pending |= sigbit(sig); /* re-sent when the program unblocks it */
		return;
	}
	sigwrap_app(o, NULL, &a);
	if (a.sa_flags & SA_SIGINFO) {
		if (!a.sa_sigaction)
			return;
	} else if (a.sa_handler == SIG_IGN || a.sa_handler == SIG_HOLD) {
		return;
	} else if (a.sa_handler == SIG_DFL) {
		/*
		 * Give the kernel the default back and resend: the signal is
		 * blocked while we run, so it is delivered when this handler
		 * returns, with the default action (terminate, for every signal
		 * we sample with).
		 */
		struct sigaction dfl;

		/* A timer's expiry (not the program's raise or kill: those
		 * stay as deterministic as without us). */
		if (si && (si->si_code == SI_KERNEL || si->si_code == SI_TIMER) &&
		    sigwrap_oneshot_running(sig)) {
			oneshot_held |= sigbit(sig); /* re-sent when it returns */
			return;
		}
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		real_sigaction(sig, &dfl, NULL);
		agent_syscall(SYS_tgkill, (pid_t)agent_syscall(SYS_getpid), (pid_t)agent_syscall(SYS_gettid), sig);
		return;
	}
	if (a.sa_flags & SA_RESETHAND) {
		struct sigaction dfl;

		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sigwrap_app(o, &dfl, NULL);
		if (!sigwrap_oneshot_running(sig)) {
			uintptr_t here = (uintptr_t)__builtin_frame_address(0);

			/* Not below the outermost recorded frame: every bit is
			 * stale (handlers left with longjmp). */
			if (!oneshot_live || !(here < oneshot_frame)) {
				oneshot_live = 0;
				oneshot_held = 0;
				oneshot_frame = here;
			}
			oneshot_live |= sigbit(sig);
			oneshot = 1;
		}
	}
	/*
	 * The program's sa_mask, as the kernel would have applied it.  SA_NODEFER
	 * is not honoured: the signal stays blocked through the program's handler
	 * (opening it would fire at once whatever arrived while we ran, before a
	 * SysV handler re-installs itself).
	 */
	if (!sigisemptyset(&a.sa_mask)) {
		agent_syscall(SYS_rt_sigprocmask, SIG_BLOCK, &a.sa_mask, &old, _NSIG / 8);
		masked = 1;
	}
	/* The program's handler is not the agent's: sigpath_active() is 0 in it
	 * (and 1 again in a sample that interrupts it). */
	in_sigpath = agent_tls.in_sigpath;
	agent_tls.in_sigpath = 0;
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, si, uc);
	else
		a.sa_handler(sig);
	agent_tls.in_sigpath = in_sigpath;
	if (masked)
		agent_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
	if (oneshot) {
		oneshot_live &= ~sigbit(sig);
		if (oneshot_held & sigbit(sig)) {
			/* Now as without us: its handler again, or the default. */
			oneshot_held &= ~sigbit(sig);
			agent_syscall(SYS_tgkill, (pid_t)agent_syscall(SYS_getpid), (pid_t)agent_syscall(SYS_gettid), sig);
		}
	}
}

static sighandler_t sigwrap_handler_of(const struct sigaction *a)
{
	return (a->sa_flags & SA_SIGINFO) ? (sighandler_t)(void *)a->sa_sigaction : a->sa_handler;
}

static int sigwrap_is_function(const struct sigaction *a)
{
	return (a->sa_flags & SA_SIGINFO) ||
	       (a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN && a->sa_handler != SIG_HOLD);
}

/* The program set a disposition for owned signal sig. */
/*
 * A signal we moved away from delivers with the program's own mask and
 * restart/defer flags, so that several of its pending signals arrive one at a
 * time, in order, as they would without us (the current sampling signal is
 * left out of the mask: a program handler must never stop sampling).
 */
static void sigwrap_kernel_act(struct owned *o)
{
	struct sigaction sa, app;
	int sig = atomic_load(&o->sig), cur = atomic_load(&agent.signo);

	if (sig == cur)
		return;
	sigwrap_app(o, NULL, &app);
	if (atomic_load(&o->oneshot) && !(sigwrap_is_function(&app) && (app.sa_flags & SA_RESETHAND))) {
		/* Guarded for one-shot handlers only: anything else is the
		 * kernel's to run, exactly as the program asked. */
		real_sigaction(sig, &app, NULL);
		return;
	}
	sigwrap_handler_act(&sa);
	if (sigwrap_is_function(&app)) {
		sa.sa_mask = app.sa_mask;
		sigdelset(&sa.sa_mask, cur);
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK | (app.sa_flags & (SA_RESTART | SA_NODEFER));
	}
	real_sigaction(sig, &sa, NULL);
}

/* glibc hands the kernel every action with its restorer, and the kernel
 * reports the flag back: the program's view shows it as the kernel would. */
#if defined(__x86_64__) || defined(__i386__)
#define SIGWRAP_SA_RESTORER 0x04000000
#else
#define SIGWRAP_SA_RESTORER 0
#endif

static void sigwrap_app_set(struct owned *o, const struct sigaction *act, struct sigaction *old)
{
	int sig = atomic_load(&o->sig);
	struct sigaction view;

	if (act) {
		view = *act;
		view.sa_flags |= SIGWRAP_SA_RESTORER;
		act = &view;
	}
	sigwrap_app(o, act, old);
	if (act && sigwrap_is_function(act) && !atomic_load(&o->oneshot) && sig != SIGIO) {
		agent_note(CBN_NOTE_SIG_HANDLER);
		if (sig == atomic_load(&agent.signo))
			sigwrap_move();
	}
	if (act)
		sigwrap_kernel_act(o);
}

/* Install a plain handler in the program's view, with the given flags. */
static sighandler_t sigwrap_app_handler(struct owned *o, sighandler_t handler, int flags)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = flags;
	sigwrap_app_set(o, &sa, &old);
	return sigwrap_handler_of(&old);
}

/*
 * A one-shot handler for a timer signal: the agent's own work lengthens the
 * window in which that signal would kill the program (sigwrap_chain), so the
 * signal is taken, with the program's disposition as its view, and only its
 * one-shot handlers run through us (sigwrap_kernel_act).  NULL when nothing
 * is to guard or no slot is free: then the kernel has it, as before.
 */
static struct owned *sigwrap_guard(int sig, const struct sigaction *act)
{
	struct sigaction cur;
	struct owned *o;

	if ((sig != SIGALRM && sig != SIGVTALRM && sig != SIGPROF) || !act ||
	    !sigwrap_is_function(act) || !(act->sa_flags & SA_RESETHAND) || !atomic_load(&agent.active))
		return NULL;
	pthread_mutex_lock(&move_lock);
	o = sigwrap_owned(sig);
	if (!o && real_sigaction(sig, NULL, &cur) == 0 && sigwrap_own_as(sig, &cur, 1) == 0)
		o = sigwrap_owned(sig);
	pthread_mutex_unlock(&move_lock);
	return o;
}

__attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction *act,
						     struct sigaction *old)
{
	void (*fn)(int, const struct sigaction *);
	struct owned *o;
	int ret;

	sigwrap_resolve();
	if (!real_sigaction) {
		errno = ENOSYS;
		return -1;
	}
	o = sigwrap_owned(sig);
	if (!o)
		o = sigwrap_guard(sig, act);
	if (o) {
		/* An owned signal: the program sees and edits only its own copy. */
		sigwrap_app_set(o, act, old);
		return 0;
	}
	ret = real_sigaction(sig, act, old);
	fn = atomic_load(&installs_fn);
	if (ret == 0 && act && fn) {
		int e = errno;

		fn(sig, act);
		errno = e;
	}
	return ret;
}

/*
 * signal() and its relatives.  glibc implements them on its internal
 * __sigaction, which our sigaction interposer never sees: for an owned signal
 * each one is emulated on the program's view; another goes to libc.  glibc's
 * signal() has BSD semantics (SA_RESTART); sysv_signal/__sysv_signal (what
 * signal() becomes under a strict -std=c11) reset the handler and do not
 * block the signal.
 */
#define SIGWRAP_SIGNAL(name, flags)                                                   \
	__attribute__((visibility("default"))) sighandler_t name(int sig, sighandler_t h) \
	{                                                                             \
		static sighandler_t (*real)(int, sighandler_t);                       \
		struct owned *o;                                                      \
                                                                                      \
		sigwrap_resolve();                                                    \
		o = sigwrap_owned(sig);                                               \
		if (!o && ((flags) & SA_RESETHAND) && h != SIG_ERR) {                \
			struct sigaction g;                                           \
                                                                                      \
			memset(&g, 0, sizeof(g));                                     \
			g.sa_handler = h;                                             \
			g.sa_flags = (flags);                                         \
			o = sigwrap_guard(sig, &g);                                   \
		}                                                                     \
		if (o) {                                                              \
			if (h == SIG_ERR) {                                           \
				errno = EINVAL;                                       \
				return SIG_ERR;                                       \
			}                                                             \
			return sigwrap_app_handler(o, h, flags);                      \
		}                                                                     \
		if (!real)                                                            \
			*(void **)&real = agent_real(#name);                          \
		if (!real) {                                                          \
			errno = ENOSYS;                                               \
			return SIG_ERR;                                               \
		}                                                                     \
		return real(sig, h);                                                  \
	}

SIGWRAP_SIGNAL(signal, SA_RESTART)
SIGWRAP_SIGNAL(bsd_signal, SA_RESTART)
SIGWRAP_SIGNAL(sysv_signal, SA_RESETHAND | SA_NODEFER)
SIGWRAP_SIGNAL(__sysv_signal, SA_RESETHAND | SA_NODEFER)

uint64_t sigwrap_app_blocked(void)
{
	return app_blocked;
}

void sigwrap_set_app_blocked(uint64_t blocked)
{
	app_blocked = blocked;
}

/*
 * The program believes an owned signal is blocked in this thread when it
 * asked for that; we keep the belief here and report it in the old masks it
 * reads back, while the kernel mask keeps the signal open.
 */
static const sigset_t *sigwrap_filter(int how, const sigset_t *set, sigset_t *copy)
{
	int sig = agent_tls.signo, member, n, named;

	if (!set || !sig || !sigwrap_owned(sig))
		return set;
	member = sigismember(set, sig) == 1;
	if (how == SIG_SETMASK)
		app_blocked = member ? app_blocked | sigbit(sig) : app_blocked & ~sigbit(sig);
	else if (how == SIG_BLOCK && member)
		app_blocked |= sigbit(sig);
	else if (how == SIG_UNBLOCK && member)
		app_blocked &= ~sigbit(sig);
	if (!member || how == SIG_UNBLOCK)
		return set;
	/* Blocking everything for a moment is common (critical sections,
	 * libraries' own locks); naming our signal is what the report notes. */
	for (n = 1, named = 0; n <= 64; n++)
		named += sigismember(set, n) == 1;
	if (named < 48)
		agent_note(CBN_NOTE_SIG_BLOCKED);
	*copy = *set;
	sigdelset(copy, sig);
	return copy;
}

/* The thread's sampling signal in an old mask: as the program believes. */
static void sigwrap_report(uint64_t was_blocked, sigset_t *old)
{
	int sig = agent_tls.signo;

	if (!old || !sig || !sigwrap_owned(sig))
		return;
	if (was_blocked & sigbit(sig))
		sigaddset(old, sig);
	else
		sigdelset(old, sig);
}

static int sigwrap_mask(sigmask_fn real, int how, const sigset_t *set, sigset_t *old)
{
	uint64_t was = app_blocked;
	sigset_t copy;
	int ret;

	ret = real(how, sigwrap_filter(how, set, &copy), old);
	if (ret == 0)
		sigwrap_report(was, old);
	else
		app_blocked = was;
	sigwrap_flush_pending(was);
	return ret;
}

__attribute__((visibility("default"))) int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	sigwrap_resolve();
	if (!real_sigprocmask) {
		errno = ENOSYS;
		return -1;
	}
	/* Agent-internal calls (the CUDA layer's libraries inside our callbacks)
	 * pass through untouched and leave the program's view alone. */
	if (agent_tls.in_handler || agent_tls.in_agent)
		return real_sigprocmask(how, set, old);
	return sigwrap_mask(real_sigprocmask, how, set, old);
}

__attribute__((visibility("default"))) int pthread_sigmask(int how, const sigset_t *set,
							   sigset_t *old)
{
	sigwrap_resolve();
	if (!real_pthread_sigmask)
		return ENOSYS;
	if (agent_tls.in_handler || agent_tls.in_agent)
		return real_pthread_sigmask(how, set, old);
	return sigwrap_mask(real_pthread_sigmask, how, set, old);
}

/* What is pending as the program sees it: its own signal held for it while it
 * believed the sampling signal blocked, never one of our samples. */
__attribute__((visibility("default"))) int sigpending(sigset_t *set)
{
	static int (*real)(sigset_t *);
	int sig = agent_tls.signo;

	if (!real)
		*(void **)&real = agent_real("sigpending");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (real(set) != 0)
		return -1;
	if (sig && sigwrap_owned(sig)) {
		if (app_pending & sigbit(sig))
			sigaddset(set, sig);
		else
			sigdelset(set, sig);
	}
	return 0;
}

/* --- System V and BSD signal APIs (implemented inside libc on its internal
 * __sigaction/__sigprocmask, so they would bypass the wrappers above). ---- */

__attribute__((visibility("default"))) sighandler_t sigset(int sig, sighandler_t disp)
{
	static sighandler_t (*real)(int, sighandler_t);
	struct owned *o;
	struct sigaction old;
	sigset_t one, prev;
	uint64_t was = app_blocked;
	int emulated = sig == agent_tls.signo, held;

	sigwrap_resolve();
	o = sigwrap_owned(sig);
	if (!o) {
		if (!real)
			*(void **)&real = agent_real("sigset");
		if (!real) {
			errno = ENOSYS;
			return SIG_ERR;
		}
		return real(sig, disp);
	}
	/* The disposition is the program's copy; the mask is emulated only for
	 * the thread's own sampling signal, real for one we moved away from. */
	sigemptyset(&one);
	sigaddset(&one, sig);
	if (emulated)
		held = (was & sigbit(sig)) != 0;
	else if (real_sigprocmask(SIG_BLOCK, NULL, &prev) == 0)
		held = sigismember(&prev, sig) == 1;
	else
		held = 0;
	if (disp == SIG_HOLD) {
		sigwrap_app(o, NULL, &old);
		if (emulated)
			app_blocked |= sigbit(sig);
		else
			real_sigprocmask(SIG_BLOCK, &one, NULL);
		return held ? SIG_HOLD : sigwrap_handler_of(&old);
	}
	old.sa_handler = sigwrap_app_handler(o, disp, 0);
	if (emulated) {
		app_blocked &= ~sigbit(sig);
		sigwrap_flush_pending(was);
	} else {
		real_sigprocmask(SIG_UNBLOCK, &one, NULL);
	}
	return held ? SIG_HOLD : old.sa_handler;
}

#define SIGWRAP_SIGFN(name, ours_body, only_sampling)                     \
	__attribute__((visibility("default"))) int name(int sig)          \
	{                                                                 \
		static int (*real)(int);                                  \
		struct owned *o;                                          \
                                                                          \
		sigwrap_resolve();                                        \
		o = sigwrap_owned(sig);                                   \
		if (o && (!(only_sampling) || sig == agent_tls.signo)) {  \
			ours_body;                                        \
			return 0;                                         \
		}                                                         \
		if (!real)                                                \
			*(void **)&real = agent_real(#name);              \
		if (!real) {                                              \
			errno = ENOSYS;                                   \
			return -1;                                        \
		}                                                         \
		return real(sig);                                         \
	}

SIGWRAP_SIGFN(sighold, app_blocked |= sigbit(sig), 1)
SIGWRAP_SIGFN(sigrelse, uint64_t was = app_blocked; app_blocked &= ~sigbit(sig);
	      sigwrap_flush_pending(was), 1)
SIGWRAP_SIGFN(sigignore, sigwrap_app_handler(o, SIG_IGN, 0), 0)

/* BSD masks are ints of sigmask(sig) bits (signals 1..31 only): the
 * thread's sampling signal, when it is one of those (--signal SIGPROF). */
static int sigwrap_bsd_bits(void)
{
	int sig = agent_tls.signo;

	return sig > 0 && sig < 32 && sigwrap_owned(sig) ? 1 << (sig - 1) : 0;
}

#define SIGWRAP_BSDMASK(name, blocks_all)                                        \
	__attribute__((visibility("default"))) int name(int mask)                \
	{                                                                        \
		static int (*real)(int);                                         \
		int bits = sigwrap_bsd_bits(), old;                              \
		uint64_t was = app_blocked;                                      \
                                                                                 \
		if (!real)                                                       \
			*(void **)&real = agent_real(#name);                     \
		if (!real)                                                       \
			return -1;                                               \
		if (blocks_all)                                                  \
			app_blocked = (app_blocked & ~(uint64_t)bits) | (uint64_t)(mask & bits); \
		else                                                             \
			app_blocked |= (uint64_t)(mask & bits);                  \
		old = real(mask & ~bits);                                        \
		sigwrap_flush_pending(was);                                      \
		return (old & ~bits) | (int)(was & (uint64_t)bits);              \
	}

SIGWRAP_BSDMASK(sigblock, 0)
SIGWRAP_BSDMASK(sigsetmask, 1)
