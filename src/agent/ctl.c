/*
 * ctl.c — the control socket: `cbottleneck ctl PID start|stop|mark NAME|dump|
 * status` reaches a running process through SESSION/ctl/<pid>.sock, served by
 * one agent thread.  Off unless capture controls were asked for or CBN_CTL=1
 * (CBN_CTL=0: never), so that a default run has no extra thread or descriptor.
 *
 * Never harm the target: the socket and every connection live in the helper
 * thread's own descriptor table (helpers.c): the program's open, socket and
 * accept get the numbers they would without us, and its close_range or
 * closefrom cannot touch ours.  The thread is raw (threads_create_raw: all
 * signals blocked, not sampled), detached, and ends the process once the
 * program has no thread left (helpers_tick).  Normal context only.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent.h"

#define CTL_POLL_MS 20      /* how often the thread looks at the process (helpers_tick) */
#define CTL_IO_MS 2000      /* a client has this long to send its line */
#define CTL_LINE 256
#define CTL_BIND_WAIT_MS 1000 /* ctl_start waits this long for the thread's socket */

static struct {
	uint32_t pid;            /* the process that bound path */
	int exit_hook;           /* on_exit handler registered (inherited by forks) */
	char dir[4200];
	char path[4300];
} ctl;
static _Atomic int ctl_held;       /* its thread ended for a hold (ctl_resume) */
static _Atomic int ctl_bound;      /* the thread's bind: 0 waiting, 1 bound, -errno */
static _Atomic int ctl_running;    /* the thread exists */

static void ctl_answer(int c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void ctl_answer(int c, const char *fmt, ...)
{
	char line[CTL_LINE + 128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	(void)!send(c, line, (size_t)n, MSG_NOSIGNAL);
}

static const char *ctl_state(void)
{
	return capture_is_on() ? "recording" : "paused";
}

/* One line in, at most CTL_LINE bytes, within CTL_IO_MS.  Returns its length
 * (newline stripped) or -1. */
static int ctl_read_line(int c, char *line)
{
	size_t n = 0;

	while (n < CTL_LINE - 1) {
		ssize_t r = recv(c, line + n, CTL_LINE - 1 - n, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (memchr(line, '\n', n))
			break;
	}
	line[n] = 0;
	line[strcspn(line, "\r\n")] = 0;
	return n ? (int)strlen(line) : -1;
}

/* "dump": a MARK, then the mapping written back.  The session file is
 * MAP_SHARED, so a reader (`cbottleneck ctl PID dump` copies it) sees every
 * committed record already; the msync puts them on disk, for a machine that
 * dies next.  In our thread: the program does not wait for it. */
static void ctl_dump(void)
{
	capture_mark("dump");
	writer_sync(&agent.w);
}

static void ctl_serve(int c)
{
	struct timeval tv = {CTL_IO_MS / 1000, (CTL_IO_MS % 1000) * 1000};
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char line[CTL_LINE];
	int on;

	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	/* The directory is 0700; this also keeps root's tools honest. */
	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    (cred.uid != geteuid() && cred.uid != 0)) {
		ctl_answer(c, "error permission denied: not the same user");
		return;
	}
	if (ctl_read_line(c, line) < 0) {
		ctl_answer(c, "error no command");
		return;
	}
	if (!atomic_load(&agent.active)) {
		ctl_answer(c, "error the agent is disabled in this process");
		return;
	}
	if (!strcmp(line, "start") || !strcmp(line, "stop")) {
		if (!capture_controlled()) {
			ctl_answer(c, "error recording is not under control in this run: run it with "
				   "a capture control (--delay, --duration, --schedule, "
				   "--capture-range) to start and stop it");
			return;
		}
		on = capture_manual(line[2] == 'a', CBN_CAUSE_CTL);
		ctl_answer(c, "ok %s", on ? "recording" : "paused");
	} else if (!strncmp(line, "mark", 4) && (line[4] == ' ' || !line[4])) {
		const char *name = line + 4;

		name += strspn(name, " ");
		if (!*name) {
			ctl_answer(c, "error mark needs a name: mark NAME");
			return;
		}
		capture_mark(name);
		ctl_answer(c, "ok %s", ctl_state());
	} else if (!strcmp(line, "dump")) {
		ctl_dump();
		ctl_answer(c, "ok %s %s", ctl_state(), agent.w.path);
	} else if (!strcmp(line, "status")) {
		struct cbn_file_header *h = agent.w.hdr;

		ctl_answer(c, "ok %s controlled=%d steps=%llu windows=%u file=%s", ctl_state(),
			   capture_controlled(),
			   (unsigned long long)(h ? atomic_load(&h->capture.steps) : 0),
			   h ? atomic_load(&h->capture.windows) : 0, agent.w.path);
	} else {
		ctl_answer(c, "error unknown command '%.64s': expected start, stop, mark NAME, "
			   "dump or status", line);
	}
}

static int ctl_bind(void);

static void *ctl_main(void *arg)
{
	int fd, ret;

	(void)arg;
	/* the raw system call, as background.c's: our prctl interposer would record
	 * the name, and the report would count the thread as the program's */
	syscall(SYS_prctl, PR_SET_NAME, "cbn-ctl", 0, 0, 0);
	/* Our own table, or no socket: a descriptor in the program's would
	 * shift the numbers its next open and accept get. */
	ret = helpers_private() ? ctl_bind() : -ENOTSUP;
	fd = ret >= 0 ? ret : -1;
	atomic_store(&ctl_bound, ret >= 0 ? 1 : ret);
	while (fd >= 0) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int n = poll(&p, 1, CTL_POLL_MS), c;

		if (n < 0 && errno != EINTR)
			break;
		if (threads_helpers_held()) {
			atomic_store(&ctl_held, 1); /* ctl_resume starts it again */
			break;
		}
		if (!atomic_load(&agent.active))
			break;
		helpers_tick(); /* ends the process once only we are left */
		if (n <= 0)
			continue;
		c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue; /* the client left (EAGAIN), or ECONNABORTED */
		ctl_serve(c);
		close(c);
	}
	if (fd >= 0)
		close(fd);
	atomic_store(&ctl_running, 0);
	return NULL;
}

/* At exit: the socket goes, and the directory with the last one. */
static void ctl_on_exit(int status, void *arg)
{
	(void)status;
	(void)arg;
	/* Under a seccomp filter: no system call (the launcher removes what is
	 * left after the run). */
	if (!ctl.path[0] || sandbox_thread_filtered() || ctl.pid != (uint32_t)getpid())
		return;
	unlink(ctl.path);
	rmdir(ctl.dir); /* fails while another process's socket is there */
	ctl.path[0] = 0;
}

/* SESSION/ctl: created 0700 if missing, then it must be a real directory,
 * ours and private (no symlink put there by someone else). */
static int ctl_dir(void)
{
	struct stat st;

	if (snprintf(ctl.dir, sizeof(ctl.dir), "%s/%s", agent.session, CBN_CTL_DIR) >=
	    (int)sizeof(ctl.dir))
		return -ENAMETOOLONG;
	if (mkdir(ctl.dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(ctl.dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		return -EPERM;
	return 0;
}

/* In the helper thread, in its own table: the listening socket, or -errno. */
static int ctl_bind(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char via[64];
	int fd, dfd = -1, ret;
	const char *name;

	name = ctl.path;
	/* A long session path does not fit sun_path (108 bytes): bind through
	 * the directory's descriptor instead, /proc/self/fd/N/PID.sock. */
	if (strlen(ctl.path) >= sizeof(sa.sun_path)) {
		dfd = open(ctl.dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0)
			return -errno;
		snprintf(via, sizeof(via), "/proc/self/fd/%d/%u.sock", dfd, ctl.pid);
		name = via;
	}
	/* fits (checked above, or the short /proc/self/fd form): a copy, which
	 * -Wformat-truncation does not take for a possible truncation */
	memcpy(sa.sun_path, name, strlen(name) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	/* An earlier image of this pid (exec, or pid reuse after a kill) may
	 * have left its socket: the name is ours in our private directory. */
	unlink(ctl.path);
	/* No umask change (process-wide, racing the program's threads): the
	 * directory is 0700, so the socket's mode before the chmod below is
	 * reachable by nobody else. */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(ctl.path, 0600) < 0 ||
	    listen(fd, 8) < 0) {
		ret = -errno;
		close(fd);
		unlink(ctl.path);
		goto out;
	}
	ret = fd;
out:
	if (dfd >= 0)
		close(dfd);
	return ret;
}

/* Start the thread and wait (at most CTL_BIND_WAIT_MS) for its bind.
 * 0 or -errno. */
static int ctl_thread(void)
{
	struct timespec ms = {0, 1000000};
	pthread_t th;
	int i, ret;

	atomic_store(&ctl_bound, 0);
	atomic_store(&ctl_running, 1);
	ret = threads_create_raw(&th, ctl_main, NULL);
	if (ret < 0) {
		atomic_store(&ctl_running, 0);
		return ret;
	}
	for (i = 0; i < CTL_BIND_WAIT_MS && !(ret = atomic_load(&ctl_bound)); i++)
		nanosleep(&ms, NULL);
	return ret > 0 ? 0 : ret ? ret : -ETIMEDOUT;
}

/*
 * Constructor (after capture_init) and fork child: open the control socket if
 * asked.  A fork child first drops the parent's descriptor (it must not answer
 * for the parent), then makes its own socket under its own pid.  Failure
 * costs the program nothing: the header's notes do not change, the agent says
 * why in the session's notes, and the run goes on without control.
 */
/* After a hold on the helpers: the thread again, on a new socket at the
 * same path. */
void ctl_resume(void)
{
	if (!atomic_exchange(&ctl_held, 0) || !ctl.path[0] || ctl.pid != (uint32_t)getpid() ||
	    atomic_load(&ctl_running))
		return;
	ctl_thread();
}

void ctl_start(void)
{
	const char *e = getenv(CBN_ENV_CTL);
	uint32_t pid = (uint32_t)getpid();
	int ret;

	if (ctl.pid != pid) {
		/* A fork child: the parent's thread did not follow us (its
		 * socket was in that thread's table), and the parent's file is
		 * not ours to unlink. */
		ctl.path[0] = 0;
		atomic_store(&ctl_running, 0);
		atomic_store(&ctl_held, 0);
	}
	if (ctl.path[0] || !agent.w.hdr || !atomic_load(&agent.active))
		return;
	if (e && !strcmp(e, "0"))
		return;
	if (!(e && !strcmp(e, "1")) && !capture_controlled())
		return;
	ctl.pid = pid;
	ret = ctl_dir();
	if (ret == 0 &&
	    snprintf(ctl.path, sizeof(ctl.path), "%s/%u.sock", ctl.dir, ctl.pid) >= (int)sizeof(ctl.path))
		ret = -ENAMETOOLONG;
	if (ret == 0) {
		if (!ctl.exit_hook && on_exit(ctl_on_exit, NULL) == 0)
			ctl.exit_hook = 1;
		ret = ctl_thread();
		if (ret == 0)
			return;
	}
	ctl.path[0] = 0;
	agent_say("no control socket in %s/%s: %s", agent.session, CBN_CTL_DIR,
		  ret == -EPERM     ? "not a private directory of ours"
		  : ret == -ENOTSUP ? "no descriptor table of its own for its thread"
				    : strerror(-ret));
}
