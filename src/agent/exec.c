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
 * there (sandbox.c).  posix_spawn and posix_spawnp (the end of this file)
 * and system and popen (shell.c) exec inside libc: they only change the
 * child's environment.
 *
 * Every form execs with the environment the agent gives children (env.c:
 * the agent's variables, which the program's environment no longer holds,
 * back in it, so that the new image is profiled), unless the new image runs
 * in secure mode (a set-user-ID program: the loader ignores LD_PRELOAD, and
 * the variables would only be in its view).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "env.h"
#include "floor.h"
#include "python_calls.h"
#include "sampler.h"
#include "sandbox.h"
#include "sigwrap.h"
#include "timer.h"

/* What sigwrap_before_exec changed, to undo when exec fails. */
static __thread int exec_restored_ign AGENT_TLS;



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

/* This thread's sampler stopped and the program's signal state set for the
 * new image (undone by exec_failed).  Returns 0. */
static int exec_sampler_pause(void)
{
	/* where the next image's start (its header's start_thread_cpu_ns)
	 * begins: the CPU between is the loader's */
	if (agent.w.hdr)
		atomic_store(&agent.w.hdr->exec_thread_cpu_ns, agent_thread_cpu());
	sampler_pause();
	sandbox_mem_thread_end(); /* this thread's allocation counts */
	agent_mem_last_point();
	python_calls_flush(); /* the new image starts from zero */
	exec_restored_ign = sigwrap_before_exec();
	return 0;
}

/* What the new image's environment gets (exec_before). */
enum { EXEC_ENV_OURS = 1, EXEC_ENV_SANDBOXED = 2 };

/*
 * Before the exec: stop this thread's sampler, and say when the new image
 * cannot be profiled.  Returns EXEC_ENV_*: whether the new image's
 * environment gets the agent's variables, and CBN_SANDBOXED (a seccomp
 * filter of the program's binds it too: the agent stays inert there, and
 * nothing here makes a system call beyond the record's lock).
 */
static int exec_before(const char *path, int search)
{
	int profiled = atomic_load(&agent.active);

	/* Its sampler stopped when the filter came (sandbox.c). */
	if (agent_sandboxed()) {
		if (profiled)
			exec_note(path, CBN_UNPROF_SECCOMP);
		return profiled ? EXEC_ENV_OURS | EXEC_ENV_SANDBOXED : 0;
	}
	/* A set-user-ID program: LD_PRELOAD is ignored, the variables stay ours. */
	if (path && exec_secure(path, search)) {
		if (profiled && (uint32_t)agent_syscall(SYS_getpid) == agent.pid)
			exec_note(path, CBN_UNPROF_SECURE);
		return (uint32_t)agent_syscall(SYS_getpid) == agent.pid ? exec_sampler_pause() : 0;
	}
	/* A vfork child runs on its parent's stack and TLS: leave them alone. */
	if ((uint32_t)agent_syscall(SYS_getpid) != agent.pid)
		return EXEC_ENV_OURS;
	if (profiled && faccessat(AT_FDCWD, agent.session, W_OK | X_OK, AT_EACCESS) != 0)
		exec_note(path, CBN_UNPROF_NO_ACCESS);
	return exec_sampler_pause() | EXEC_ENV_OURS;
}

static void exec_failed(void)
{
	int e = errno;

	if (!agent_sandboxed() && (uint32_t)agent_syscall(SYS_getpid) == agent.pid) {
		sigwrap_exec_failed(exec_restored_ign);
		exec_restored_ign = 0;
		sampler_resume();
	}
	errno = e;
}

/* One wrapper per form; ENV: the environment the program gives, CALL: the
 * real call with envp as the environment (the children's: env.c; on the
 * caller's stack, no allocation: a filtered thread or a vfork child). */
#define EXEC_WRAP(name, proto, path, search, ENV, CALL)                          \
	__attribute__((visibility("default"))) int name proto                    \
	{                                                                        \
		static int(*real) proto;                                         \
		char *const *given = (ENV);                                       \
		char *out[env_child_size(given)], preload[8192];                 \
		char *const *envp = given;                                        \
		int ret, how;                                                    \
                                                                                 \
		if (!real)                                                       \
			*(void **)&real = agent_real(#name);                     \
		if (!real) {                                                     \
			errno = ENOSYS;                                          \
			return -1;                                               \
		}                                                                \
		how = exec_before(path, search);                                 \
		if (how & EXEC_ENV_OURS)                                         \
			envp = env_for_child(given, out, preload, sizeof(preload), \
					     how & EXEC_ENV_SANDBOXED);          \
		ret = CALL;                                                      \
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
	  envp == given ? real(path, argv) : exec_execve(path, argv, envp))
EXEC_WRAP(execvp, (const char *file, char *const argv[]), file, 1, environ,
	  envp == given ? real(file, argv) : exec_execvpe(file, argv, envp))
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

/* --- posix_spawn --------------------------------------------------------- */

/* posix_spawn and posix_spawnp only give the child the environment the agent
 * gives children: the child is a new image, its sampler is its own. */

typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			const posix_spawnattr_t *, char *const[], char *const[]);

static int exec_spawn(spawn_fn *real, const char *name, pid_t *pid, const char *path,
		     const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
		     char *const argv[], char *const envp[])
{
	char *out[env_child_size(envp)], preload[8192];

	if (!*real)
		*(void **)real = agent_real(name);
	if (!*real)
		return ENOSYS;
	return (*real)(pid, path, fa, attr, argv,
		       env_for_child(envp, out, preload, sizeof(preload), 0));
}

__attribute__((visibility("default"))) int posix_spawn(pid_t *pid, const char *path,
						       const posix_spawn_file_actions_t *fa,
						       const posix_spawnattr_t *attr,
						       char *const argv[], char *const envp[])
{
	static spawn_fn real;

	return exec_spawn(&real, "posix_spawn", pid, path, fa, attr, argv, envp);
}

__attribute__((visibility("default"))) int posix_spawnp(pid_t *pid, const char *file,
							const posix_spawn_file_actions_t *fa,
							const posix_spawnattr_t *attr,
							char *const argv[], char *const envp[])
{
	static spawn_fn real;

	return exec_spawn(&real, "posix_spawnp", pid, file, fa, attr, argv, envp);
}
