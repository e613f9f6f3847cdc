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
 *
 * The wrappers also say when the new image will not be profiled although its
 * environment asks for it (a CBN_REC_UNPROFILED record in this image's
 * file): credentials that cannot write the session any more (setuid before
 * the exec), a set-user-ID program (the loader ignores LD_PRELOAD), or a
 * seccomp filter of the program's that the new image inherits; in that last
 * case the new environment gets CBN_SANDBOXED=1 and the agent stays inert
 * there (sandbox.c).  posix_spawn and system exec inside libc: not seen.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent.h"

/* What sigwrap_before_exec changed, to undo when exec fails. */
static __thread int exec_restored_ign AGENT_TLS;

static const char exec_sandboxed[] = CBN_ENV_SANDBOXED "=1";

/* The environment the new image gets asks for the agent (CBN_SESSION). */
static int exec_profiled(char *const envp[])
{
	size_t n = strlen(CBN_ENV_SESSION);
	int i;

	for (i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], CBN_ENV_SESSION, n) && envp[i][n] == '=' && envp[i][n + 1])
			return 1;
	return 0;
}

/* A set-user-ID or set-group-ID program the loader runs in secure mode
 * (LD_PRELOAD ignored): file (a path, or a name looked up in PATH). */
static int exec_secure(const char *file, int search)
{
	char buf[4096];
	const char *p, *path = file;
	struct stat st;

	if (search && !strchr(file, '/')) {
		p = getenv("PATH");
		path = NULL;
		while (p && *p) {
			size_t len = strcspn(p, ":");

			if (snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, p, file) < (int)sizeof(buf) &&
			    access(buf, X_OK) == 0) {
				path = buf;
				break;
			}
			p += len + (p[len] == ':');
		}
		if (!path)
			return 0;
	}
	if (stat(path, &st) != 0)
		return 0;
	return ((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
	       ((st.st_mode & S_ISGID) && st.st_gid != getegid());
}

/* CBN_REC_UNPROFILED into this image's file. */
static void exec_note(const char *path, uint32_t reason)
{
	struct {
		struct cbn_rec_unprofiled r;
		char path[512];
	} rec;
	size_t n = path ? strnlen(path, sizeof(rec.path) - 1) : 0;

	memset(&rec, 0, sizeof(rec));
	rec.r.h.type = CBN_REC_UNPROFILED;
	rec.r.h.size = (uint32_t)CBN_REC_ALIGN(sizeof(rec.r) + n + 1);
	rec.r.ts = agent_now();
	rec.r.pid = agent.pid;
	rec.r.reason = reason;
	rec.r.uid = (uint32_t)getuid();
	rec.r.euid = (uint32_t)geteuid();
	rec.r.path_len = (uint32_t)n;
	memcpy(rec.path, path, n);
	if (agent_event(&rec, rec.r.h.size) == 0 && agent.w.hdr)
		atomic_fetch_add(&agent.w.hdr->guard.exec_unprofiled, 1);
}

/*
 * Before the exec: stop this thread's sampler, and say when the new image
 * cannot be profiled.  Returns 1 when the new image must get CBN_SANDBOXED
 * (a seccomp filter of the program's binds it too: the agent stays inert
 * there, and nothing here makes a system call beyond the record's lock).
 */
static int exec_before(const char *path, char *const envp[], int search)
{
	int profiled = atomic_load(&agent.active) && exec_profiled(envp);

	/* Its sampler stopped when the filter came (sandbox.c). */
	if (sandbox_thread_filtered()) {
		if (profiled)
			exec_note(path, CBN_UNPROF_SECCOMP);
		return profiled;
	}
	/* A vfork child runs on its parent's stack and TLS: leave them alone. */
	if ((uint32_t)syscall(SYS_getpid) != agent.pid)
		return 0;
	if (profiled && path && exec_secure(path, search))
		exec_note(path, CBN_UNPROF_SECURE);
	else if (profiled && faccessat(AT_FDCWD, agent.session, W_OK | X_OK, AT_EACCESS) != 0)
		exec_note(path, CBN_UNPROF_NO_ACCESS);
	sampler_pause();
	sandbox_mem_thread_end(); /* this thread's allocation counts */
	agent_mem_last_point();
	exec_restored_ign = sigwrap_before_exec();
	return 0;
}

static void exec_failed(void)
{
	int e = errno;

	if (!sandbox_thread_filtered() && (uint32_t)syscall(SYS_getpid) == agent.pid) {
		sigwrap_exec_failed(exec_restored_ign);
		exec_restored_ign = 0;
		sampler_resume();
	}
	errno = e;
}

/* envp with CBN_SANDBOXED=1 added, in out (n + 2 entries, on the caller's
 * stack: no allocation on a filtered thread). */
static char *const *exec_env_add(char *const envp[], char **out)
{
	int i = 0;

	for (; envp && envp[i]; i++)
		out[i] = envp[i];
	out[i++] = (char *)exec_sandboxed;
	out[i] = NULL;
	return out;
}

static int exec_env_count(char *const envp[])
{
	int i = 0;

	while (envp && envp[i])
		i++;
	return i;
}

/* One wrapper per form; ENV: the environment the new image gets, CALL: the
 * real call with envp as the environment. */
#define EXEC_WRAP(name, proto, path, search, ENV, CALL)                          \
	__attribute__((visibility("default"))) int name proto                    \
	{                                                                        \
		static int(*real) proto;                                         \
		char *const *envp = (ENV);                                        \
		int ret, sb;                                                     \
                                                                                 \
		if (!real)                                                       \
			*(void **)&real = agent_real(#name);                     \
		if (!real) {                                                     \
			errno = ENOSYS;                                          \
			return -1;                                               \
		}                                                                \
		sb = exec_before(path, envp, search);                            \
		if (sb) {                                                        \
			char *with[exec_env_count(envp) + 2];                    \
                                                                                 \
			envp = exec_env_add(envp, with);                         \
			ret = CALL;                                              \
		} else {                                                         \
			ret = CALL;                                              \
		}                                                                \
		exec_failed();                                                   \
		return ret;                                                      \
	}

static int (*exec_real_execve)(const char *, char *const[], char *const[]);
static int (*exec_real_execvpe)(const char *, char *const[], char *const[]);

/* execv and execvp with the environment changed: through the forms that
 * take one (the real ones, not our wrappers). */
static int exec_execve(const char *path, char *const argv[], char *const envp[])
{
	if (!exec_real_execve)
		*(void **)&exec_real_execve = agent_real("execve");
	return exec_real_execve ? exec_real_execve(path, argv, envp) : (errno = ENOSYS, -1);
}

static int exec_execvpe(const char *file, char *const argv[], char *const envp[])
{
	if (!exec_real_execvpe)
		*(void **)&exec_real_execvpe = agent_real("execvpe");
	return exec_real_execvpe ? exec_real_execvpe(file, argv, envp) : (errno = ENOSYS, -1);
}

EXEC_WRAP(execve, (const char *path, char *const argv[], char *const envp_in[]), path, 0, envp_in,
	  real(path, argv, envp))
EXEC_WRAP(execvpe, (const char *file, char *const argv[], char *const envp_in[]), file, 1, envp_in,
	  real(file, argv, envp))
EXEC_WRAP(execv, (const char *path, char *const argv[]), path, 0, environ,
	  envp == environ ? real(path, argv) : exec_execve(path, argv, envp))
EXEC_WRAP(execvp, (const char *file, char *const argv[]), file, 1, environ,
	  envp == environ ? real(file, argv) : exec_execvpe(file, argv, envp))
EXEC_WRAP(fexecve, (int fd, char *const argv[], char *const envp_in[]), NULL, 0, envp_in,
	  real(fd, argv, envp))

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
