/*
 * sigwrap_watch.c — the signal APIs the agent only watches (sigwrap.c owns
 * those that could change the sampling signal's disposition or mask): a wait
 * for the sampling signal is noted (sigwait & co., signalfd), and a request
 * for SIGIO of the program's own (O_ASYNC, F_SETSIG) is remembered, so a
 * kernel SIGIO is not taken for our perf event's (timer_sigqueue_full).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "floor.h"
#include "sigwrap_watch.h"

/* Waiting for signals: noted when the set holds the sampling signal. */
static void sigwrap_note_wait(const sigset_t *set)
{
	int signo = atomic_load(&agent.signo);

	if (set && signo && sigismember(set, signo) == 1)
		agent_note(CBN_NOTE_SIG_WAITED);
}

#define SIGWRAP_WAIT(ret_t, name, proto, args, set)                    \
	__attribute__((visibility("default"))) ret_t name proto       \
	{                                                              \
		static ret_t(*real) proto;                             \
                                                                       \
		if (!real)                                             \
			*(void **)&real = agent_real(#name);           \
		if (!real) {                                           \
			errno = ENOSYS;                                \
			return -1;                                     \
		}                                                      \
		sigwrap_note_wait(set);                                \
		return real args;                                      \
	}

SIGWRAP_WAIT(int, sigwait, (const sigset_t *set, int *sig), (set, sig), set)
SIGWRAP_WAIT(int, sigwaitinfo, (const sigset_t *set, siginfo_t *info), (set, info), set)
SIGWRAP_WAIT(int, sigtimedwait, (const sigset_t *set, siginfo_t *info, const struct timespec *t),
	     (set, info, t), set)
SIGWRAP_WAIT(int, signalfd, (int fd, const sigset_t *mask, int flags), (fd, mask, flags), mask)

/*
 * Whether the program ever asked for SIGIO of its own: an O_ASYNC
 * descriptor (fcntl F_SETFL, ioctl FIOASYNC) or F_SETSIG.  Until it does,
 * every kernel SIGIO on a perf-sampled thread stands for our perf event's
 * signal that could not be queued (timer_sigqueue_full).  A descriptor set
 * so by a raw system call, or inherited across exec, is not seen.
 */
static _Atomic int app_async;

/* SIGNAL-SAFE. */
int sigwrap_app_async(void)
{
	return atomic_load_explicit(&app_async, memory_order_relaxed);
}

__attribute__((visibility("default"))) int fcntl(int fd, int cmd, ...)
{
	static int (*real)(int, int, ...);
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if ((cmd == F_SETFL && ((long)(intptr_t)arg & O_ASYNC)) || cmd == F_SETSIG)
		atomic_store(&app_async, 1);
	if (!real)
		*(void **)&real = agent_real("fcntl");
	if (!real)
		return (int)agent_syscall(SYS_fcntl, fd, cmd, arg);
	return real(fd, cmd, arg);
}

/* glibc's other name for it (large-file builds call it). */
__attribute__((visibility("default"))) int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl(fd, cmd, arg);
}

__attribute__((visibility("default"))) int ioctl(int fd, unsigned long req, ...)
{
	static int (*real)(int, unsigned long, ...);
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (req == FIOASYNC && arg && *(const int *)arg)
		atomic_store(&app_async, 1);
	if (!real)
		*(void **)&real = agent_real("ioctl");
	if (!real)
		return (int)agent_syscall(SYS_ioctl, fd, req, arg);
	return real(fd, req, arg);
}
