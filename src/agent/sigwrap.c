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
 * thread, signal context) reads app_act[app_cur] while a writer fills the
 * other slot and flips the index.  Writers hold app_spin with all signals
 * blocked, so a handler (a SysV handler re-installing itself) can write too.
 */
static struct sigaction app_act[2];
static _Atomic int app_cur;
static _Atomic int app_spin;
static _Atomic int sig_owned; /* agent.signo is installed */

static void sigwrap_app(const struct sigaction *act, struct sigaction *old);

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
/* A signal for the target arrived while it had our signal "blocked": it is
 * re-sent when the target unblocks, as the kernel would have delivered it. */
static __thread int sig_app_pending AGENT_TLS;

/* After the target's view went from blocked to open: deliver what waited. */
static void sigwrap_flush_pending(int was_blocked)
{
	if (was_blocked && !sig_app_blocked && sig_app_pending) {
		sig_app_pending = 0;
		syscall(SYS_tgkill, (pid_t)syscall(SYS_getpid), (pid_t)syscall(SYS_gettid),
			agent.signo);
	}
}

/* Open our signal in this thread; if it was blocked (a mask inherited across
 * exec, or from a thread we did not create), the target keeps seeing it so. */
/*
 * exec keeps an ignored disposition and the signal mask, and resets handled
 * dispositions: the next image must inherit what the target believes it
 * set (SIG_IGN, blocked), not what we run with.  Returns what was changed,
 * for sigwrap_exec_failed to undo.
 */
int sigwrap_before_exec(void)
{
	struct sigaction a, ign;
	sigset_t s;
	int changed = 0;

	if (!atomic_load(&sig_owned))
		return 0;
	sigwrap_app(NULL, &a);
	if (!(a.sa_flags & SA_SIGINFO) && a.sa_handler == SIG_IGN) {
		memset(&ign, 0, sizeof(ign));
		ign.sa_handler = SIG_IGN;
		if (real_sigaction(agent.signo, &ign, NULL) == 0)
			changed |= 1;
	}
	if (sig_app_blocked) {
		sigemptyset(&s);
		sigaddset(&s, agent.signo);
		if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, &s, NULL, _NSIG / 8) == 0)
			changed |= 2;
	}
	return changed;
}

void sigwrap_exec_failed(int changed)
{
	struct sigaction sa;
	sigset_t s;

	if (changed & 1) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = sampler_handler;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
		real_sigaction(agent.signo, &sa, NULL);
	}
	if (changed & 2) {
		sigemptyset(&s);
		sigaddset(&s, agent.signo);
		syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &s, NULL, _NSIG / 8);
	}
}

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

/* A thread that held app_spin at fork does not exist in the child. */
void sigwrap_after_fork_child(void)
{
	atomic_store(&app_spin, 0);
}

/* Read and/or replace the target's disposition for our signal.
 * SIGNAL-SAFE (raw sigprocmask, spin lock held with signals blocked). */
static void sigwrap_app(const struct sigaction *act, struct sigaction *old)
{
	sigset_t all, saved;
	int cur;

	sigfillset(&all);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &saved, _NSIG / 8);
	while (atomic_exchange_explicit(&app_spin, 1, memory_order_acquire))
		syscall(SYS_sched_yield);
	cur = atomic_load(&app_cur);
	if (old)
		*old = app_act[cur];
	if (act) {
		app_act[!cur] = *act;
		atomic_store_explicit(&app_cur, !cur, memory_order_release);
	}
	atomic_store_explicit(&app_spin, 0, memory_order_release);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &saved, NULL, _NSIG / 8);
}

/*
 * A signal that is not one of our expirations (kill, the target's own
 * setitimer or timer_create): do what the target's disposition says.
 * SIGNAL CONTEXT.
 */
void sigwrap_chain(int sig, siginfo_t *si, void *uc)
{
	struct sigaction a;
	sigset_t old;
	int masked = 0;

	if (sig_app_blocked) {
		sig_app_pending = 1; /* standard signals do not queue: one is enough */
		return;
	}
	sigwrap_app(NULL, &a);
	if (a.sa_flags & SA_SIGINFO) {
		if (!a.sa_sigaction)
			return;
	} else if (a.sa_handler == SIG_IGN || a.sa_handler == SIG_HOLD) {
		return;
	} else if (a.sa_handler == SIG_DFL) {
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
	if (a.sa_flags & SA_RESETHAND) {
		struct sigaction dfl;

		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sigwrap_app(&dfl, NULL);
	}
	/*
	 * The target's sa_mask, as the kernel would have applied it.  SA_NODEFER
	 * is not honoured: our signal stays blocked through the target's
	 * handler.  Opening it here would fire at once whatever arrived while we
	 * ran, before a SysV handler (SA_RESETHAND|SA_NODEFER) re-installs
	 * itself, and the reset disposition would kill the process.
	 */
	if (!sigisemptyset(&a.sa_mask)) {
		syscall(SYS_rt_sigprocmask, SIG_BLOCK, &a.sa_mask, &old, _NSIG / 8);
		masked = 1;
	}
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, si, uc);
	else
		a.sa_handler(sig);
	if (masked)
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
}

static sighandler_t sigwrap_handler_of(const struct sigaction *a)
{
	return (a->sa_flags & SA_SIGINFO) ? (sighandler_t)(void *)a->sa_sigaction : a->sa_handler;
}

/* Install a plain handler in the target's view, with the given flags. */
static sighandler_t sigwrap_app_handler(sighandler_t handler, int flags)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = flags;
	sigwrap_app(&sa, &old);
	return sigwrap_handler_of(&old);
}

__attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction *act,
						     struct sigaction *old)
{
	sigwrap_resolve();
	if (!real_sigaction) {
		errno = ENOSYS;
		return -1;
	}
	if (!sigwrap_is_ours(sig))
		return real_sigaction(sig, act, old);
	/* Our signal: the target sees and edits only its own copy. */
	sigwrap_app(act, old);
	return 0;
}

/*
 * signal() and its relatives.  glibc implements them on its internal
 * __sigaction, which our sigaction interposer never sees, so each one that
 * can replace a handler is wrapped.  glibc's signal() has BSD semantics
 * (SA_RESTART); sysv_signal/__sysv_signal (what signal() becomes under a
 * strict -std=c11) reset the handler and do not block the signal.
 */
#define SIGWRAP_SIGNAL(name, flags)                                                   \
	__attribute__((visibility("default"))) sighandler_t name(int sig, sighandler_t h) \
	{                                                                             \
		static sighandler_t (*real)(int, sighandler_t);                       \
                                                                                      \
		sigwrap_resolve();                                                    \
		if (sigwrap_is_ours(sig)) {                                           \
			if (h == SIG_ERR) {                                           \
				errno = EINVAL;                                       \
				return SIG_ERR;                                       \
			}                                                             \
			return sigwrap_app_handler(h, flags);                         \
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
	/* libunwind masks signals around its locks, also inside our handler
	 * (where the kernel mask holds our signal): agent-internal calls pass
	 * through untouched and leave the target's view alone. */
	if (agent_tls.in_handler || agent_tls.in_agent)
		return real_sigprocmask(how, set, old);
	ret = real_sigprocmask(how, sigwrap_filter(how, set, &copy), old);
	if (ret == 0)
		sigwrap_report(was, old);
	else
		sig_app_blocked = was;
	sigwrap_flush_pending(was);
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
	/* libunwind masks signals around its locks, also inside our handler
	 * (where the kernel mask holds our signal): agent-internal calls pass
	 * through untouched and leave the target's view alone. */
	if (agent_tls.in_handler || agent_tls.in_agent)
		return real_pthread_sigmask(how, set, old);
	ret = real_pthread_sigmask(how, sigwrap_filter(how, set, &copy), old);
	if (ret == 0)
		sigwrap_report(was, old);
	else
		sig_app_blocked = was;
	sigwrap_flush_pending(was);
	return ret;
}

/* --- System V and BSD signal APIs (implemented inside libc on its internal
 * __sigaction/__sigprocmask, so they would bypass the wrappers above). ---- */

__attribute__((visibility("default"))) sighandler_t sigset(int sig, sighandler_t disp)
{
	static sighandler_t (*real)(int, sighandler_t);
	struct sigaction old;
	int was = sig_app_blocked;

	sigwrap_resolve();
	if (!sigwrap_is_ours(sig)) {
		if (!real)
			*(void **)&real = agent_real("sigset");
		if (!real) {
			errno = ENOSYS;
			return SIG_ERR;
		}
		return real(sig, disp);
	}
	if (disp == SIG_HOLD) {
		sigwrap_app(NULL, &old);
		sig_app_blocked = 1;
		return was ? SIG_HOLD : sigwrap_handler_of(&old);
	}
	old.sa_handler = sigwrap_app_handler(disp, 0);
	sig_app_blocked = 0;
	sigwrap_flush_pending(was);
	return was ? SIG_HOLD : old.sa_handler;
}

#define SIGWRAP_SIGFN(name, ours_body)                                    \
	__attribute__((visibility("default"))) int name(int sig)          \
	{                                                                 \
		static int (*real)(int);                                  \
                                                                          \
		sigwrap_resolve();                                        \
		if (sigwrap_is_ours(sig)) {                               \
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

SIGWRAP_SIGFN(sighold, sig_app_blocked = 1)
SIGWRAP_SIGFN(sigrelse, int was = sig_app_blocked; sig_app_blocked = 0; sigwrap_flush_pending(was))
SIGWRAP_SIGFN(sigignore, sigwrap_app_handler(SIG_IGN, 0))

/* BSD masks are ints of sigmask(sig) bits (signals 1..31 only). */
static int sigwrap_bsd_bit(void)
{
	return atomic_load(&sig_owned) && agent.signo < 32 ? 1 << (agent.signo - 1) : 0;
}

#define SIGWRAP_BSDMASK(name, blocks_all)                                        \
	__attribute__((visibility("default"))) int name(int mask)                \
	{                                                                        \
		static int (*real)(int);                                         \
		int bit = sigwrap_bsd_bit(), was = sig_app_blocked, old;         \
                                                                                 \
		if (!real)                                                       \
			*(void **)&real = agent_real(#name);                     \
		if (!real)                                                       \
			return -1;                                               \
		if (bit && (mask & bit))                                         \
			sig_app_blocked = 1;                                     \
		else if (bit && (blocks_all))                                    \
			sig_app_blocked = 0;                                     \
		old = real(mask & ~bit);                                         \
		sigwrap_flush_pending(was);                                      \
		return was ? old | bit : old;                                    \
	}

SIGWRAP_BSDMASK(sigblock, 0)
SIGWRAP_BSDMASK(sigsetmask, 1)
