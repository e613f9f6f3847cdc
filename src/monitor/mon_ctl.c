/*
 * mon_ctl.c — the control sockets (`cbottleneck ctl PID start|stop|mark
 * NAME|dump|status`, docs/steps.md): the launcher serves one per process of
 * the run, DIR/ctl/PID.sock beside the process's session file, for as long as
 * the process lives.  The commands act on the process's newest image through
 * its header's gates (mon_capture.c) and its side file; no thread, socket or
 * descriptor of ours is in the program.  Sockets exist when the run has a
 * capture control, or CBN_CTL=1 is in the launcher's environment (CBN_CTL=0:
 * never).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "cbn_gates.h"
#include "mon_int.h"
#include "../format/cbn_time.h"

#define CTL_LINE 256
#define CTL_IO_MS 200      /* a client has this long to send its line */

static void ctl_answer(int c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void ctl_answer(int c, const char *fmt, ...)
{
	char line[CTL_LINE + PATH_MAX + 128];
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

/* One line in, at most CTL_LINE bytes, within CTL_IO_MS.  Its length
 * (newline stripped), or -1. */
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

/* The newest live image of pid, or NULL. */
static struct mon_image *ctl_image(struct mon *m, uint32_t pid)
{
	struct mon_image *best = NULL;
	size_t i;

	for (i = 0; i < m->nimg; i++) {
		struct mon_image *im = &m->img[i];

		if (im->pid == pid && im->hdr && !im->ended && (!best || im->seq > best->seq))
			best = im;
	}
	return best;
}

static const char *ctl_state(const struct mon_image *im)
{
	return cbn_gates_open(im->hdr) ? "recording" : "paused";
}

/* The image's files on disk now (a machine that dies next keeps them). */
static void ctl_sync(struct mon_image *im)
{
	int fd = open(im->path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		fdatasync(fd);
		close(fd);
	}
	if (im->side.hdr)
		writer_sync(&im->side);
}

static void ctl_serve(struct mon *m, uint32_t pid, int c)
{
	struct timeval tv = {0, CTL_IO_MS * 1000};
	struct mon_image *im;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char line[CTL_LINE];
	int controlled;

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
	im = ctl_image(m, pid);
	if (!im) {
		ctl_answer(c, "error process %u has ended", pid);
		return;
	}
	if (atomic_load(&im->hdr->disabled)) {
		ctl_answer(c, "error the agent is disabled in this process");
		return;
	}
	controlled = atomic_load(&im->hdr->capture.mode) == CBN_CAPTURE_CONTROLLED;
	if (!strcmp(line, "start") || !strcmp(line, "stop")) {
		if (!controlled) {
			ctl_answer(c, "error recording is not under control in this run: run it with "
				   "a capture control (--delay, --duration, --schedule, "
				   "--capture-range) to start and stop it");
			return;
		}
		ctl_answer(c, "ok %s",
			   mon_capture_gate(im, mon_capture_manual(m), line[2] == 'a', CBN_CAUSE_CTL)
				   ? "recording"
				   : "paused");
	} else if (!strncmp(line, "mark", 4) && (line[4] == ' ' || !line[4])) {
		const char *name = line + 4;

		name += strspn(name, " ");
		if (!*name) {
			ctl_answer(c, "error mark needs a name: mark NAME");
			return;
		}
		mon_capture_record(im, cbn_clock_ns(CLOCK_MONOTONIC), CBN_CAPTURE_MARK, CBN_CAUSE_CTL,
				   name);
		ctl_answer(c, "ok %s", ctl_state(im));
	} else if (!strcmp(line, "dump")) {
		mon_capture_record(im, cbn_clock_ns(CLOCK_MONOTONIC), CBN_CAPTURE_MARK, CBN_CAUSE_CTL,
				   "dump");
		ctl_sync(im);
		ctl_answer(c, "ok %s %s", ctl_state(im), im->path);
	} else if (!strcmp(line, "status")) {
		ctl_answer(c, "ok %s controlled=%d steps=%llu windows=%u file=%s", ctl_state(im),
			   controlled, (unsigned long long)atomic_load(&im->hdr->capture.steps),
			   atomic_load(&im->hdr->capture.windows), im->path);
	} else {
		ctl_answer(c, "error unknown command '%.64s': expected start, stop, mark NAME, "
			   "dump or status", line);
	}
}

/* DIR/ctl: created 0700 if missing, then it must be a real directory, ours
 * and private (no symlink put there by someone else). */
static int ctl_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		return -EPERM;
	return 0;
}

/* The listening socket at s->path (through the directory's descriptor when
 * the path does not fit sun_path), or -errno. */
static int ctl_bind(struct mon_sock *s)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char via[64];
	const char *name = s->path;
	int fd, dfd = -1, ret;

	if (strlen(s->path) >= sizeof(sa.sun_path)) {
		dfd = open(s->dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0)
			return -errno;
		snprintf(via, sizeof(via), "/proc/self/fd/%d/%u.sock", dfd, s->pid);
		name = via;
	}
	memcpy(sa.sun_path, name, strlen(name) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	/* An earlier process of this pid (pid reuse) may have left it. */
	unlink(s->path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(s->path, 0600) < 0 ||
	    listen(fd, 8) < 0) {
		ret = -errno;
		close(fd);
		unlink(s->path);
		goto out;
	}
	ret = fd;
out:
	if (dfd >= 0)
		close(dfd);
	return ret;
}

static void ctl_close(struct mon_sock *s);

/* A socket for the process of im, once: its later images share it, unless
 * one lives in another directory (an exec that named a rank, RANK=1 set
 * inside the run: the process's file is now in rank-00001), where the socket
 * moves with it. */
void mon_ctl_image(struct mon *m, struct mon_image *im)
{
	struct mon_sock *s;
	char dir[sizeof(s->dir)];
	const char *slash;
	size_t i;
	int ret;

	if (!m->ctl)
		return;
	slash = strrchr(im->path, '/');
	if (!slash || snprintf(dir, sizeof(dir), "%.*s/%s", (int)(slash - im->path), im->path,
			       CBN_CTL_DIR) >= (int)sizeof(dir))
		return;
	for (i = 0; i < m->nsock; i++) {
		if (m->sock[i].pid != im->pid)
			continue;
		if (strcmp(m->sock[i].dir, dir) == 0 || im->seq < m->sock[i].seq)
			return;
		ctl_close(&m->sock[i]);
		m->sock[i] = m->sock[--m->nsock];
		break;
	}
	if (m->nsock == m->capsock) {
		size_t cap = m->capsock ? m->capsock * 2 : 8;
		struct mon_sock *n = realloc(m->sock, cap * sizeof(*n));

		if (!n)
			return;
		m->sock = n;
		m->capsock = cap;
	}
	s = &m->sock[m->nsock];
	memset(s, 0, sizeof(*s));
	s->pid = im->pid;
	s->seq = im->seq;
	memcpy(s->dir, dir, sizeof(dir));
	if (snprintf(s->path, sizeof(s->path), "%s/%u.sock", s->dir, im->pid) >= (int)sizeof(s->path))
		return;
	ret = ctl_dir(s->dir);
	if (ret == 0)
		ret = ctl_bind(s);
	if (ret < 0) {
		if (m->verbose)
			fprintf(stderr, "cbottleneck: no control socket for process %u in %s: %s\n",
				im->pid, s->dir,
				ret == -EPERM ? "not a private directory of ours" : strerror(-ret));
		return;
	}
	s->fd = ret;
	m->nsock++;
}

static void ctl_close(struct mon_sock *s)
{
	close(s->fd);
	unlink(s->path);
	rmdir(s->dir); /* fails while another process's socket is there */
}

/* The processes that are gone lose their socket. */
void mon_ctl_reap(struct mon *m)
{
	size_t i = 0;

	while (i < m->nsock) {
		if (ctl_image(m, m->sock[i].pid)) {
			i++;
			continue;
		}
		ctl_close(&m->sock[i]);
		m->sock[i] = m->sock[--m->nsock];
	}
}

int mon_ctl_fds(struct mon *m, struct pollfd *p, int max)
{
	int n = 0;
	size_t i;

	for (i = 0; i < m->nsock && n < max; i++) {
		p[n].fd = m->sock[i].fd;
		p[n].events = POLLIN;
		p[n].revents = 0;
		n++;
	}
	return n;
}

/* Clients waiting on the sockets polled ready (p: what mon_fds gave). */
void mon_ctl_serve(struct mon *m, const struct pollfd *p, int n)
{
	size_t i;
	int k, c;

	for (k = 0; k < n; k++) {
		if (!(p[k].revents & POLLIN))
			continue;
		for (i = 0; i < m->nsock; i++) {
			if (m->sock[i].fd != p[k].fd)
				continue;
			c = accept4(p[k].fd, NULL, NULL, SOCK_CLOEXEC);
			if (c >= 0) {
				ctl_serve(m, m->sock[i].pid, c);
				close(c);
			}
			break;
		}
	}
}

void mon_ctl_end(struct mon *m)
{
	size_t i;

	for (i = 0; i < m->nsock; i++)
		ctl_close(&m->sock[i]);
	free(m->sock);
	m->sock = NULL;
	m->nsock = m->capsock = 0;
}
