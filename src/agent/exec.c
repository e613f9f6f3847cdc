/*
 * exec.c — the exec family, interposed only to stop this thread's timer first.
 * A POSIX timer expiring while the thread is inside execve (the kernel work
 * counts as thread CPU time) queues our signal; exec then resets the handler
 * to SIG_DFL but keeps the queued signal (sigqueue_free leaves a queued entry
 * in place), and the new image dies of it before its first instruction.
 * Deleting the timer first closes that window: an expiry already queued is
 * delivered to our handler when sampler_pause restores the signal mask.  If
 * exec fails, re-arm.
 * glibc's execl/execvp & co. call __execve internally, so each is wrapped.
 */
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent.h"

/* What sigwrap_before_exec changed, to undo when exec fails. */
static __thread int exec_restored_ign AGENT_TLS;

static void exec_before(void)
{
	/* A vfork child runs on its parent's stack and TLS: leave them alone. */
	if ((uint32_t)syscall(SYS_getpid) != agent.pid)
		return;
	sampler_pause();
	sandbox_mem_thread_end(); /* this thread's allocation counts */
	agent_mem_counters_now();
	exec_restored_ign = sigwrap_before_exec();
}

static void exec_failed(void)
{
	int e = errno;

	if ((uint32_t)syscall(SYS_getpid) == agent.pid) {
		sigwrap_exec_failed(exec_restored_ign);
		exec_restored_ign = 0;
		sampler_resume();
	}
	errno = e;
}

#define EXEC_WRAP(name, proto, args)                                             \
	__attribute__((visibility("default"))) int name proto                    \
	{                                                                        \
		static int(*real) proto;                                         \
		int ret;                                                         \
                                                                                 \
		if (!real)                                                       \
			*(void **)&real = agent_real(#name);                     \
		if (!real) {                                                     \
			errno = ENOSYS;                                          \
			return -1;                                               \
		}                                                                \
		exec_before();                                                   \
		ret = real args;                                                 \
		exec_failed();                                                   \
		return ret;                                                      \
	}

EXEC_WRAP(execve, (const char *path, char *const argv[], char *const envp[]), (path, argv, envp))
EXEC_WRAP(execv, (const char *path, char *const argv[]), (path, argv))
EXEC_WRAP(execvp, (const char *file, char *const argv[]), (file, argv))
EXEC_WRAP(execvpe, (const char *file, char *const argv[], char *const envp[]), (file, argv, envp))
EXEC_WRAP(fexecve, (int fd, char *const argv[], char *const envp[]), (fd, argv, envp))

/* The list forms: collect the arguments, then go through the vector forms. */
#define EXEC_COLLECT(arg0, ap, n)                                                 \
	do {                                                                     \
		va_list cp_;                                                     \
		const char *a0_ = (arg0);                                        \
		/* glibc declares arg nonnull; callers pass NULL anyway. */      \
		__asm__("" : "+r"(a0_));                                         \
		va_copy(cp_, ap);                                                \
		n = 0;                                                           \
		if (a0_)                                                         \
			for (n = 1; va_arg(cp_, char *); n++)                    \
				;                                                \
		va_end(cp_);                                                     \
	} while (0)

__attribute__((visibility("default"))) int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	int n, i;

	va_start(ap, arg);
	EXEC_COLLECT(arg, ap, n);
	{
		char *argv[n + 1];

		argv[0] = (char *)arg;
		for (i = 1; i <= n; i++)
			argv[i] = va_arg(ap, char *); /* ends with the NULL */
		va_end(ap);
		return execv(path, argv);
	}
}

__attribute__((visibility("default"))) int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	int n, i;

	va_start(ap, arg);
	EXEC_COLLECT(arg, ap, n);
	{
		char *argv[n + 1];

		argv[0] = (char *)arg;
		for (i = 1; i <= n; i++)
			argv[i] = va_arg(ap, char *); /* ends with the NULL */
		va_end(ap);
		return execvp(file, argv);
	}
}

__attribute__((visibility("default"))) int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	char *const *envp;
	int n, i;

	va_start(ap, arg);
	EXEC_COLLECT(arg, ap, n);
	{
		char *argv[n + 1];

		argv[0] = (char *)arg;
		for (i = 1; i <= n; i++)
			argv[i] = va_arg(ap, char *); /* ends with the NULL */
		envp = va_arg(ap, char *const *);
		va_end(ap);
		return execve(path, argv, envp);
	}
}
