/*
 * ctl.c — the control socket: `cbottleneck ctl PID start|stop|mark NAME|dump|
 * status` reaches a running process through SESSION/ctl/<pid>.sock, served by
 * one agent thread.  Off unless capture controls were asked for or CBN_CTL=1
 * (CBN_CTL=0: never), so that a default run has no extra thread or descriptor.
 *
 * Never harm the target: the socket and every connection are CLOEXEC; the
 * listening descriptor sits high (not where the program's next open lands)
 * and its identity is checked before each use, so a program that closes it
 * (closefrom) or reuses its number ends the service instead of having its own
 * descriptor read; the thread is raw (threads_create_raw: all signals blocked,
 * not sampled), detached, and leaves when it is the last thread of a program
 * whose main thread called pthread_exit.  Normal context only.
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

#define CTL_POLL_MS 500     /* how often the thread checks it is not alone */
#define CTL_IO_MS 2000      /* a client has this long to send its line */
#define CTL_LINE 256

static struct {
	int fd;                  /* listening socket, -1: none */
	dev_t dev;               /* its identity (fstat): a number the program */
	ino_t ino;               /* reused is not ours */
	uint32_t pid;            /* the process that bound path */
	int exit_hook;           /* on_exit handler registered (inherited by forks) */
	char dir[4200];
	char path[4300];
} ctl = {.fd = -1};
static _Atomic int ctl_held;       /* its thread ended for a hold (ctl_resume) */

/* 1 while fd is still the socket we bound. */
static int ctl_fd_ours(int fd)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == ctl.dev &&
	       st.st_ino == ctl.ino;
}

/* Live threads of the program among the few in /proc/self/task: not ours
 * (named "cbn-...") and not a zombie (a main thread that called pthread_exit
 * stays listed until the process ends).  -1 if unknown.  Raw getdents64:
 * opendir would malloc under the memory hooks. */
static int ctl_program_threads(void)
{
	char buf[2048], path[300], st[128], *p;
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC), live = 0;
	long n, off;

	if (fd < 0)
		return -1;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (off = 0; off < n;) {
			struct dirent64 *e = (struct dirent64 *)(buf + off);
			ssize_t r;
			int sfd;

			off += e->d_reclen;
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
			sfd = open(path, O_RDONLY | O_CLOEXEC);
			if (sfd < 0)
				continue;
			r = read(sfd, st, sizeof(st) - 1);
			close(sfd);
			if (r <= 0)
				continue;
			st[r] = 0;
			/* "TID (COMM) STATE ..." */
			p = strrchr(st, ')');
			if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
				continue;
			p = strchr(st, '(');
			if (p && !strncmp(p + 1, "cbn-", 4))
				continue;
			live++;
		}
	}
	close(fd);
	return live;
}

/*
 * 1 when only agent threads are left: the program's main thread called
 * pthread_exit and its other threads have ended.  A detached thread still
 * keeps a process alive, so ours must go (its return is then the process's
 * exit(0), as the program's last thread's would have been; the background
 * thread, when it runs, leaves on its own terms).  /proc/self/stat is read
 * with a descriptor held for a few microseconds, every CTL_POLL_MS; the
 * thread names only when there are few threads.
 */
static int ctl_alone(void)
{
	char buf[1024], *p;
	ssize_t n;
	long threads = 0;
	int i, fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* Field 20 (num_threads); the command name (field 2) may hold spaces. */
	p = strrchr(buf, ')');
	for (i = 2; p && i < 20; i++)
		p = strchr(p + 1, ' ');
	if (p)
		threads = strtol(p + 1, NULL, 10);
	if (threads == 1)
		return 1;
	return threads > 1 && threads <= 4 && ctl_program_threads() == 0;
}

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
	return atomic_load(&capture_on) ? "recording" : "paused";
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
	struct cbn_file_header *h = agent.w.hdr;

	capture_mark("dump");
	if (h)
		msync(h, (size_t)atomic_load(&h->file_size), MS_SYNC);
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

static void *ctl_main(void *arg)
{
	int fd = ctl.fd;

	(void)arg;
	prctl(PR_SET_NAME, "cbn-ctl", 0, 0, 0);
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int n = poll(&p, 1, CTL_POLL_MS), c;

		if (n < 0 && errno == EINTR)
			continue;
		/* Closed or replaced by the program: it is not ours to touch. */
		if (n < 0 || (p.revents & POLLNVAL) || !ctl_fd_ours(fd))
			break;
		if (threads_helpers_held()) {
			atomic_store(&ctl_held, 1); /* ctl_resume starts it again */
			break;
		}
		if (n == 0) {
			if (ctl_alone())
				break;
			continue;
		}
		c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue; /* the client left (EAGAIN), or ECONNABORTED */
		ctl_serve(c);
		close(c);
	}
	return NULL;
}

/* At exit: the socket goes, and the directory with the last one. */
static void ctl_on_exit(int status, void *arg)
{
	(void)status;
	(void)arg;
	if (!ctl.path[0] || ctl.pid != (uint32_t)getpid())
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

/* Move fd high, out of the way of the program's next open (most programs
 * expect the lowest free number); keeps it where it is if that fails. */
static int ctl_fd_high(int fd)
{
	struct rlimit rl;
	rlim_t lim = 1024;
	int hi;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < lim)
		lim = rl.rlim_cur;
	if (lim <= 16)
		return fd;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, (int)(lim - 8));
	if (hi < 0)
		return fd;
	close(fd);
	return hi;
}

static int ctl_bind(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char via[64];
	struct stat st;
	int fd, dfd = -1, ret = 0;
	const char *name;

	snprintf(ctl.path, sizeof(ctl.path), "%s/%u.sock", ctl.dir, ctl.pid);
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
	fd = ctl_fd_high(fd);
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		close(fd);
		unlink(ctl.path);
		goto out;
	}
	ctl.dev = st.st_dev;
	ctl.ino = st.st_ino;
	ctl.fd = fd;
out:
	if (dfd >= 0)
		close(dfd);
	if (ret)
		ctl.path[0] = 0;
	return ret;
}

/*
 * Constructor (after capture_init) and fork child: open the control socket if
 * asked.  A fork child first drops the parent's descriptor (it must not answer
 * for the parent), then makes its own socket under its own pid.  Failure
 * costs the program nothing: the header's notes do not change, the agent says
 * why in the session's notes, and the run goes on without control.
 */
/* After a hold on the helpers: the thread again on the same socket. */
void ctl_resume(void)
{
	pthread_t th;

	if (!atomic_exchange(&ctl_held, 0) || ctl.fd < 0 || ctl.pid != (uint32_t)getpid())
		return;
	if (threads_create_raw(&th, ctl_main, NULL) == 0)
		pthread_detach(th);
}

void ctl_start(void)
{
	const char *e = getenv(CBN_ENV_CTL);
	uint32_t pid = (uint32_t)getpid();
	pthread_t th;
	int ret;

	if (ctl.fd >= 0 && ctl.pid != pid) {
		/* The fork copy of the parent's socket; the parent's thread
		 * did not follow us and its file is not ours to unlink. */
		if (ctl_fd_ours(ctl.fd))
			close(ctl.fd);
		ctl.fd = -1;
		ctl.path[0] = 0;
	}
	if (ctl.fd >= 0 || !agent.w.hdr || !atomic_load(&agent.active))
		return;
	if (e && !strcmp(e, "0"))
		return;
	if (!(e && !strcmp(e, "1")) && !capture_controlled())
		return;
	ctl.pid = pid;
	ret = ctl_dir();
	if (ret == 0)
		ret = ctl_bind();
	if (ret == 0) {
		if (!ctl.exit_hook && on_exit(ctl_on_exit, NULL) == 0)
			ctl.exit_hook = 1;
		if (threads_create_raw(&th, ctl_main, NULL) < 0) {
			ret = -EAGAIN;
			close(ctl.fd);
			ctl.fd = -1;
			unlink(ctl.path);
			ctl.path[0] = 0;
		} else {
			pthread_detach(th);
			return;
		}
	}
	agent_say("no control socket in %s/%s: %s", agent.session, CBN_CTL_DIR,
		  ret == -EPERM ? "not a private directory of ours" : strerror(-ret));
}
