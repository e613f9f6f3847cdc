/*
 * sigwrap.c — keeps the sampling signal ours without the target noticing: picks
 * a free signal, installs the handler, and interposes sigaction, signal,
 * sigprocmask and pthread_sigmask so the target can neither replace our handler
 * nor block the signal.  The target's own disposition for that signal is kept
 * here and honoured for every signal that is not one of our timer expirations.
 */
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent.h"

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef int (*sigmask_fn)(int, const sigset_t *, sigset_t *);

static sigaction_fn real_sigaction;
static sigmask_fn real_sigprocmask, real_pthread_sigmask;

/*
 * The target's view of our signal.  Two slots and an index: the handler (any
 * thread, signal context) reads app_act[app_cur] while sigaction() fills the
 * other slot under app_lock and then flips the index.
 */
static struct sigaction app_act[2];
static _Atomic int app_cur;
static pthread_mutex_t app_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int sig_owned; /* agent.signo is installed */

static void sigwrap_resolve(void)
{
	if (!real_sigaction)
		real_sigaction = (sigaction_fn)agent_real("sigaction");
	if (!real_sigprocmask)
		real_sigprocmask = (sigmask_fn)agent_real("sigprocmask");
	if (!real_pthread_sigmask)
		real_pthread_sigmask = (sigmask_fn)agent_real("pthread_sigmask");
}

static int sigwrap_is_ours(int sig)
{
	return sig > 0 && atomic_load_explicit(&sig_owned, memory_order_acquire) && sig == agent.signo;
}

/* Order from async-profiler's OS::getProfilingSignal(): first one whose
 * disposition is default or ignore. */
static int sigwrap_pick(struct sigaction *old)
{
	int cand[8] = {SIGPROF, SIGVTALRM, SIGSTKFLT, SIGPWR, 0, 0, 0, 0};
	int i;

	for (i = 0; i < 4; i++)
		cand[4 + i] = SIGRTMIN + 2 + i;
	for (i = 0; i < 8; i++) {
		if (real_sigaction(cand[i], NULL, old) < 0)
			continue;
		if (!(old->sa_flags & SA_SIGINFO) &&
		    (old->sa_handler == SIG_DFL || old->sa_handler == SIG_IGN))
			return cand[i];
	}
	return 0;
}

int sigwrap_install(void)
{
	struct sigaction sa, old;
	int sig;

	sigwrap_resolve();
	if (!real_sigaction || !real_sigprocmask || !real_pthread_sigmask)
		return -ENOSYS;
	sig = sigwrap_pick(&old);
	if (!sig)
		return -EBUSY;
	app_act[0] = old;
	atomic_store(&app_cur, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sampler_handler;
	sigemptyset(&sa.sa_mask);
	/* SA_RESTART: interrupted reads/writes resume as without us.  Our
	 * timers only fire while the thread burns CPU, so sleeps (which are never
	 * restarted, signal(7)) are not interrupted. */
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	if (real_sigaction(sig, &sa, NULL) < 0)
		return -errno;
	agent.signo = sig;
	atomic_store_explicit(&sig_owned, 1, memory_order_release);
	return 0;
}

static __thread int sig_app_blocked AGENT_TLS;

/* Open our signal in this thread; if it was blocked (a mask inherited across
 * exec, or from a thread we did not create), the target keeps seeing it so. */
int sigwrap_unblock(void)
{
	sigset_t s, old;
	int ret;

	if (!agent.signo || !real_pthread_sigmask)
		return -1;
	sigemptyset(&s);
	sigaddset(&s, agent.signo);
	ret = real_pthread_sigmask(SIG_UNBLOCK, &s, &old);
	if (ret == 0 && sigismember(&old, agent.signo) == 1)
		sig_app_blocked = 1;
	return ret;
}

int sigwrap_real_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	sigwrap_resolve();
	return real_pthread_sigmask ? real_pthread_sigmask(how, set, old) : ENOSYS;
}

/*
 * A signal that is not one of our expirations (kill, the target's own
 * setitimer or timer_create): do what the target's disposition says.
 * SIGNAL CONTEXT.
 */
void sigwrap_chain(int sig, siginfo_t *si, void *uc)
{
	struct sigaction *a = &app_act[atomic_load_explicit(&app_cur, memory_order_acquire)];
	sigset_t old;
	int masked = 0;

	if (a->sa_flags & SA_SIGINFO) {
		if (!a->sa_sigaction)
			return;
	} else if (a->sa_handler == SIG_IGN) {
		return;
	} else if (a->sa_handler == SIG_DFL) {
		/*
		 * Every candidate signal's default action is to terminate.  Give the
		 * kernel the default back and resend: the signal is blocked while we
		 * run, so it is delivered (and kills) when this handler returns.
		 */
		struct sigaction dfl;

		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		real_sigaction(sig, &dfl, NULL);
		syscall(SYS_tgkill, (pid_t)syscall(SYS_getpid), (pid_t)syscall(SYS_gettid), sig);
		return;
	}
	/* The target's sa_mask, as the kernel would have applied it. */
	if (!sigisemptyset(&a->sa_mask)) {
		syscall(SYS_rt_sigprocmask, SIG_BLOCK, &a->sa_mask, &old, _NSIG / 8);
		masked = 1;
	}
	if (a->sa_flags & SA_SIGINFO) {
		void (*fn)(int, siginfo_t *, void *) = a->sa_sigaction;

		if (a->sa_flags & SA_RESETHAND)
			a->sa_sigaction = NULL, a->sa_flags &= ~SA_SIGINFO, a->sa_handler = SIG_DFL;
		fn(sig, si, uc);
	} else {
		void (*fn)(int) = a->sa_handler;

		if (a->sa_flags & SA_RESETHAND)
			a->sa_handler = SIG_DFL;
		fn(sig);
	}
	if (masked)
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
}

__attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction *act,
						     struct sigaction *old)
{
	int cur;

	sigwrap_resolve();
	if (!real_sigaction) {
		errno = ENOSYS;
		return -1;
	}
	if (!sigwrap_is_ours(sig))
		return real_sigaction(sig, act, old);
	/* Our signal: the target sees and edits only its own copy. */
	pthread_mutex_lock(&app_lock);
	cur = atomic_load(&app_cur);
	if (old)
		*old = app_act[cur];
	if (act) {
		app_act[!cur] = *act;
		atomic_store_explicit(&app_cur, !cur, memory_order_release);
	}
	pthread_mutex_unlock(&app_lock);
	return 0;
}

__attribute__((visibility("default"))) sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction sa, old;

	sigwrap_resolve();
	if (!sigwrap_is_ours(sig)) {
		static sighandler_t (*real_signal)(int, sighandler_t);

		if (!real_signal)
			real_signal = (sighandler_t(*)(int, sighandler_t))agent_real("signal");
		if (!real_signal) {
			errno = ENOSYS;
			return SIG_ERR;
		}
		return real_signal(sig, handler);
	}
	/* glibc's signal() has BSD semantics: SA_RESTART, signal blocked in handler. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(sig, &sa, &old) < 0)
		return SIG_ERR;
	return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)(void *)old.sa_sigaction : old.sa_handler;
}

/*
 * The target believes our signal is blocked in this thread when it asked for
 * that; we keep the belief here and report it in the old masks it reads back,
 * while the kernel mask keeps the signal open.
 */

int sigwrap_app_blocked(void)
{
	return sig_app_blocked;
}

void sigwrap_set_app_blocked(int blocked)
{
	sig_app_blocked = blocked;
}

/* Strip our signal from masks the target blocks (libmonitor's
 * monitor_remove_client_signals). */
static const sigset_t *sigwrap_filter(int how, const sigset_t *set, sigset_t *copy)
{
	int member;

	if (!set || !atomic_load(&sig_owned))
		return set;
	member = sigismember(set, agent.signo) == 1;
	if (how == SIG_SETMASK)
		sig_app_blocked = member;
	else if (how == SIG_BLOCK && member)
		sig_app_blocked = 1;
	else if (how == SIG_UNBLOCK && member)
		sig_app_blocked = 0;
	if (how == SIG_UNBLOCK || !member)
		return set;
	*copy = *set;
	sigdelset(copy, agent.signo);
	return copy;
}

static void sigwrap_report(int was_blocked, sigset_t *old)
{
	if (old && was_blocked && atomic_load(&sig_owned))
		sigaddset(old, agent.signo);
}

__attribute__((visibility("default"))) int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	int was = sig_app_blocked, ret;
	sigset_t copy;

	sigwrap_resolve();
	if (!real_sigprocmask) {
		errno = ENOSYS;
		return -1;
	}
	ret = real_sigprocmask(how, sigwrap_filter(how, set, &copy), old);
	if (ret == 0)
		sigwrap_report(was, old);
	else
		sig_app_blocked = was;
	return ret;
}

__attribute__((visibility("default"))) int pthread_sigmask(int how, const sigset_t *set,
							   sigset_t *old)
{
	int was = sig_app_blocked, ret;
	sigset_t copy;

	sigwrap_resolve();
	if (!real_pthread_sigmask)
		return ENOSYS;
	ret = real_pthread_sigmask(how, sigwrap_filter(how, set, &copy), old);
	if (ret == 0)
		sigwrap_report(was, old);
	else
		sig_app_blocked = was;
	return ret;
}
