/*
 * shell.c — system(), popen() and pclose(), done as glibc 2.36 does them
 * (stdlib/system.c, libio/iopopen.c) but with the environment the agent
 * gives children (env.c: its variables back, so that the shell and what it
 * runs are profiled): glibc's own spawn inside libc with the environ it finds
 * there, which no longer holds them.  The same observable behaviour: SIGINT
 * and SIGQUIT ignored and SIGCHLD blocked in the caller while system() waits
 * (counted across threads), the shell's signal mask and defaults set by
 * posix_spawn, 127 when no shell could start, cancellation killing the
 * child; popen's child closing the other popen streams' descriptors, "e" for
 * close-on-exec, pclose waiting for that child.  Normal context only.
 *
 * Its sigaction, sigprocmask and fcntl calls reach the agent's interposers
 * (sigwrap.c, sigwrap_watch.c) on purpose: system() and popen() act for the
 * program, so they change and restore the program's view of its signals,
 * as glibc's internal calls change the real ones.  Its posix_spawn is
 * exec.c's, which builds the children's environment once more.
 */
#include <errno.h>
#include <fcntl.h>
#include <paths.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "env.h"
#include "floor.h"

#define SHELL_POPEN_MAX 256              /* popen streams open at once; beyond: glibc's */

/* --- system() -------------------------------------------------------------- */

static pthread_mutex_t shell_lock = PTHREAD_MUTEX_INITIALIZER;
static int shell_refs;                   /* system() calls under way */
static struct sigaction shell_intr, shell_quit;

struct shell_wait {
	pid_t pid;
};

/* Cancelled while waiting: the child goes, the dispositions come back. */
static void shell_cancel(void *arg)
{
	struct shell_wait *w = arg;
	int st;

	kill(w->pid, SIGKILL);
	while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR)
		;
	pthread_mutex_lock(&shell_lock);
	if (--shell_refs == 0) {
		sigaction(SIGINT, &shell_intr, NULL);
		sigaction(SIGQUIT, &shell_quit, NULL);
	}
	pthread_mutex_unlock(&shell_lock);
}

static int shell_system(const char *line)
{
	char *argv[] = {"sh", "-c", "--", (char *)line, NULL};
	char *out[env_child_size(environ)], preload[8192];
	struct sigaction ign;
	sigset_t omask, reset, chld;
	posix_spawnattr_t attr;
	struct shell_wait w;
	int status = -1, ret;

	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	pthread_mutex_lock(&shell_lock);
	if (shell_refs++ == 0) {
		sigaction(SIGINT, &ign, &shell_intr);
		sigaction(SIGQUIT, &ign, &shell_quit);
	}
	pthread_mutex_unlock(&shell_lock);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &omask);
	sigemptyset(&reset);
	if (shell_intr.sa_handler != SIG_IGN)
		sigaddset(&reset, SIGINT);
	if (shell_quit.sa_handler != SIG_IGN)
		sigaddset(&reset, SIGQUIT);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &omask);
	posix_spawnattr_setsigdefault(&attr, &reset);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	ret = posix_spawn(&w.pid, _PATH_BSHELL, NULL, &attr, argv,
			  env_for_child(environ, out, preload, sizeof(preload), 0));
	posix_spawnattr_destroy(&attr);
	if (ret == 0) {
		pthread_cleanup_push(shell_cancel, &w);
		while ((ret = (int)waitpid(w.pid, &status, 0)) < 0 && errno == EINTR)
			;
		if (ret != w.pid)
			status = -1;
		ret = 0;
		pthread_cleanup_pop(0);
	} else {
		/* POSIX: as if the shell had ended with _exit(127) */
		status = 127 << 8;
	}
	pthread_mutex_lock(&shell_lock);
	if (--shell_refs == 0) {
		sigaction(SIGINT, &shell_intr, NULL);
		sigaction(SIGQUIT, &shell_quit, NULL);
	}
	pthread_mutex_unlock(&shell_lock);
	sigprocmask(SIG_SETMASK, &omask, NULL);
	if (ret != 0)
		errno = ret;
	return status;
}

__attribute__((visibility("default"))) int system(const char *line)
{
	static int (*real)(const char *);

	if (!atomic_load(&agent.active) || agent_sandboxed()) {
		if (!real)
			*(void **)&real = agent_real("system");
		return real ? real(line) : -1;
	}
	if (!line)
		return shell_system("exit 0") == 0;
	return shell_system(line);
}

/* --- popen() and pclose() ------------------------------------------------- */

static struct {
	FILE *fp;
	pid_t pid;
	int fd;
} shell_popen[SHELL_POPEN_MAX];
static pthread_mutex_t shell_popen_lock = PTHREAD_MUTEX_INITIALIZER;

static FILE *shell_do_popen(const char *cmd, int do_read, int cloexec)
{
	char *argv[] = {"sh", "-c", "--", (char *)cmd, NULL};
	char *out[env_child_size(environ)], preload[8192];
	posix_spawn_file_actions_t fa;
	int fds[2], parent, child, want = do_read ? 1 : 0, slot = -1, i, ret, e;
	FILE *fp = NULL;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return NULL;
	parent = do_read ? fds[0] : fds[1];
	child = do_read ? fds[1] : fds[0];
	if (posix_spawn_file_actions_init(&fa) != 0) {
		e = ENOMEM;
		goto fail;
	}
	/* the child end on the shell's stdin or stdout (dup2 clears its
	 * close-on-exec; when it already is that descriptor, the flag goes) */
	if (child == want) {
		fcntl(child, F_SETFD, 0);
	} else {
		posix_spawn_file_actions_adddup2(&fa, child, want);
	}
	pthread_mutex_lock(&shell_popen_lock);
	/* POSIX: streams of earlier popen() calls are closed in the child */
	for (i = 0; i < SHELL_POPEN_MAX; i++) {
		if (shell_popen[i].fp && shell_popen[i].fd != want)
			posix_spawn_file_actions_addclose(&fa, shell_popen[i].fd);
		else if (!shell_popen[i].fp && slot < 0)
			slot = i;
	}
	ret = slot < 0 ? EMFILE
		       : posix_spawn(&pid, _PATH_BSHELL, &fa, NULL, argv,
				     env_for_child(environ, out, preload, sizeof(preload), 0));
	posix_spawn_file_actions_destroy(&fa);
	if (ret != 0) {
		pthread_mutex_unlock(&shell_popen_lock);
		e = ret;
		goto fail;
	}
	close(child);
	if (!cloexec)
		fcntl(parent, F_SETFD, 0);
	fp = fdopen(parent, do_read ? "r" : "w");
	if (!fp) {
		int st;

		e = errno;
		pthread_mutex_unlock(&shell_popen_lock);
		close(parent);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		errno = e;
		return NULL;
	}
	shell_popen[slot].fp = fp;
	shell_popen[slot].pid = pid;
	shell_popen[slot].fd = parent;
	pthread_mutex_unlock(&shell_popen_lock);
	return fp;
fail:
	close(fds[0]);
	close(fds[1]);
	errno = e;
	return NULL;
}

__attribute__((visibility("default"))) FILE *popen(const char *cmd, const char *mode)
{
	static FILE *(*real)(const char *, const char *);
	int do_read, cloexec = 0, free_slot = 0, i;
	const char *m;

	if (!real)
		*(void **)&real = agent_real("popen");
	if (!mode || (mode[0] != 'r' && mode[0] != 'w')) {
		errno = EINVAL;
		return NULL;
	}
	do_read = mode[0] == 'r';
	for (m = mode + 1; *m; m++) {
		if (*m == 'e')
			cloexec = 1;
		else if (*m != ' ' && *m != 'b') {
			errno = EINVAL;
			return NULL;
		}
	}
	pthread_mutex_lock(&shell_popen_lock);
	for (i = 0; i < SHELL_POPEN_MAX && !free_slot; i++)
		free_slot = !shell_popen[i].fp;
	pthread_mutex_unlock(&shell_popen_lock);
	if (!atomic_load(&agent.active) || agent_sandboxed() || !free_slot)
		return real ? real(cmd, mode) : NULL;
	return shell_do_popen(cmd, do_read, cloexec);
}

__attribute__((visibility("default"))) int pclose(FILE *fp)
{
	static int (*real)(FILE *);
	pid_t pid = 0;
	int i, st;

	pthread_mutex_lock(&shell_popen_lock);
	for (i = 0; i < SHELL_POPEN_MAX; i++)
		if (shell_popen[i].fp && shell_popen[i].fp == fp) {
			pid = shell_popen[i].pid;
			shell_popen[i].fp = NULL;
			break;
		}
	pthread_mutex_unlock(&shell_popen_lock);
	if (!pid) {
		if (!real)
			*(void **)&real = agent_real("pclose");
		return real ? real(fp) : -1;
	}
	fclose(fp);
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	return st;
}
