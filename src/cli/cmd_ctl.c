/*
 * cmd_ctl.c — `cbottleneck ctl PID start|stop|mark NAME|dump|status`: find the
 * session of a running profiled process (the session file it has mapped), send
 * one line to its control socket SESSION/ctl/PID.sock (served by the launcher
 * of the run: src/monitor/mon_ctl.c), print the answer.
 * `dump` then reports what was recorded so far, from a copy of the session.
 * Exit statuses: docs/cli.md (0 ok, 1 the agent said no, 2 usage, 3 no such
 * profiled process or no socket).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cbn_format.h"
#include "cli.h"

#define CTL_EXIT_ERROR 1
#define CTL_EXIT_USAGE 2
#define CTL_EXIT_NOPROC 3
#define CTL_ANSWER_S 5     /* the launcher answers at once; this is for a stopped one */
#define CTL_WAIT_SOCKET_MS 300 /* a new process's socket comes within a few ms */

static const char ctl_usage_text[] =
	"usage: cbottleneck ctl PID COMMAND\n"
	"Control a program that cbottleneck is profiling, without restarting it\n"
	"(docs/steps.md).  COMMAND is one of:\n"
	"  start        record again (after stop)\n"
	"  stop         stop recording; the program runs on\n"
	"  mark NAME    put a named instant on the timeline\n"
	"  dump         mark \"dump\", then print the report of what was recorded so far\n"
	"  status       recording or paused, steps and windows so far\n"
	"The process has a control socket when it runs with a capture control (--delay,\n"
	"--duration, --schedule, --capture-range, --toggle-signal) or with CBN_CTL=1 in\n"
	"cbottleneck's environment.  Exit status: 0 ok, 1 the process answered an error,\n"
	"2 usage, 3 no such profiled process or no control socket.\n";

static int ctl_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int ctl_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "cbottleneck: ctl: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "; see cbottleneck ctl --help\n");
	return CTL_EXIT_USAGE;
}

/* "DIR/PID.SEQ.cbp" at the end of a /proc/PID/maps line: DIR into dir. */
static int ctl_map_line(const char *line, long pid, char *dir, size_t len)
{
	const char *path = strchr(line, '/'), *base;
	char want[32];
	size_t n, ext = strlen(CBN_FILE_EXT);

	if (!path)
		return -1;
	n = strcspn(path, "\n");
	if (n <= ext || strncmp(path + n - ext, CBN_FILE_EXT, ext) != 0)
		return -1;
	base = path + n;
	while (base > path && base[-1] != '/')
		base--;
	snprintf(want, sizeof(want), "%ld.", pid);
	if (strncmp(base, want, strlen(want)) != 0 || (size_t)(base - 1 - path) >= len)
		return -1;
	memcpy(dir, path, (size_t)(base - 1 - path));
	dir[base - 1 - path] = '\0';
	return 0;
}

/* The directory of the process's session file, from /proc/PID/maps: the
 * agent keeps its file PID.SEQ.cbp mapped (the program's environment holds
 * nothing of ours).  Same user only.  Returns 0 or CTL_EXIT_NOPROC after one
 * line. */
static int ctl_find_session(long pid, char *session, size_t len)
{
	char path[64], line[PATH_MAX + 256];
	struct stat st;
	FILE *f;
	int ret = CTL_EXIT_NOPROC;

	snprintf(path, sizeof(path), "/proc/%ld", pid);
	if (stat(path, &st) < 0) {
		fprintf(stderr, "cbottleneck: ctl: no process %ld\n", pid);
		return CTL_EXIT_NOPROC;
	}
	if (st.st_uid != geteuid()) {
		fprintf(stderr, "cbottleneck: ctl: process %ld belongs to another user; ctl only "
			"controls your own processes\n", pid);
		return CTL_EXIT_NOPROC;
	}
	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "cbottleneck: ctl: cannot read the mappings of process %ld: %s\n",
			pid, strerror(errno));
		return CTL_EXIT_NOPROC;
	}
	session[0] = 0;
	while (fgets(line, sizeof(line), f))
		if (ctl_map_line(line, pid, session, len) == 0) {
			ret = 0;
			break;
		}
	fclose(f);
	/* A main thread that called pthread_exit shows no mappings: any live
	 * thread's view is the same. */
	if (ret) {
		char tpath[300];
		struct dirent *e;
		DIR *d;

		snprintf(tpath, sizeof(tpath), "/proc/%ld/task", pid);
		d = opendir(tpath);
		while (d && ret && (e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(tpath, sizeof(tpath), "/proc/%ld/task/%s/maps", pid, e->d_name);
			f = fopen(tpath, "r");
			while (f && fgets(line, sizeof(line), f))
				if (ctl_map_line(line, pid, session, len) == 0) {
					ret = 0;
					break;
				}
			if (f)
				fclose(f);
		}
		if (d)
			closedir(d);
	}
	if (ret)
		fprintf(stderr, "cbottleneck: ctl: process %ld is not profiled by cbottleneck (no "
			"session file of its own is mapped)\n", pid);
	return ret;
}

/* Connect to SESSION/ctl/PID.sock; through the directory's descriptor when
 * the path is longer than sun_path.  Returns the socket or -errno. */
static int ctl_connect(const char *session, long pid)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char dir[PATH_MAX + 16], path[PATH_MAX + 64];
	struct timeval tv = {CTL_ANSWER_S, 0};
	struct stat st;
	int fd, dfd = -1, ret;

	snprintf(dir, sizeof(dir), "%s/%s", session, CBN_CTL_DIR);
	if (lstat(dir, &st) < 0)
		return -errno;
	/* The agent made it 0700 and ours; anything else is not its. */
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		return -EPERM;
	snprintf(path, sizeof(path), "%s/%ld.sock", dir, pid);
	if (strlen(path) >= sizeof(sa.sun_path)) {
		dfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0)
			return -errno;
		snprintf(path, sizeof(path), "/proc/self/fd/%d/%ld.sock", dfd, pid);
	}
	/* fits: checked above, or the short /proc/self/fd form (a copy, not
	 * snprintf, which -Wformat-truncation cannot see is bounded) */
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		ret = -errno;
		close(fd);
		goto out;
	}
	ret = fd;
out:
	if (dfd >= 0)
		close(dfd);
	return ret;
}

/* Send line, read one line back into answer.  0 or -errno. */
static int ctl_exchange(int fd, const char *line, char *answer, size_t len)
{
	size_t n = 0, want = strlen(line);
	ssize_t r;

	while (n < want) {
		r = send(fd, line + n, want - n, MSG_NOSIGNAL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		n += (size_t)r;
	}
	shutdown(fd, SHUT_WR);
	n = 0;
	while (n < len - 1) {
		r = recv(fd, answer + n, len - 1 - n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		n += (size_t)r;
		if (memchr(answer, '\n', n))
			break;
	}
	answer[n] = 0;
	answer[strcspn(answer, "\n")] = 0;
	return n ? 0 : -ECONNRESET;
}

/* Copy the allocated part of one session file (they are sparse at their full
 * length: header.file_size says how much is real). */
static int ctl_copy_file(const char *from, const char *to)
{
	struct cbn_file_header h;
	char buf[1 << 16];
	uint64_t left;
	int in, out, ret = -1;
	ssize_t r;

	in = open(from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0)
		goto out;
	if (pread(in, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, CBN_MAGIC, sizeof(h.magic)))
		goto out;
	left = atomic_load(&h.file_size);
	while (left > 0) {
		r = read(in, buf, left < sizeof(buf) ? left : sizeof(buf));
		if (r <= 0)
			break;
		if (write(out, buf, (size_t)r) != r)
			goto out;
		left -= (uint64_t)r;
	}
	ret = 0;
out:
	if (out >= 0)
		close(out);
	close(in);
	return ret;
}

/* Copy the session's files to a private directory and report it there: the
 * live files stay untouched and the report sees them as of now. */
static int ctl_report_copy(const char *session, long pid)
{
	char tmpl[PATH_MAX], from[PATH_MAX + 256], to[PATH_MAX + 256];
	const char *tmp = getenv("TMPDIR");
	struct cli_opts o;
	struct dirent *e;
	size_t ext = strlen(CBN_FILE_EXT), sext = strlen(CBN_SIDE_EXT);
	int ret, copied = 0, side;
	DIR *d;

	if (!tmp || !*tmp || access(tmp, W_OK) != 0)
		tmp = "/tmp";
	snprintf(tmpl, sizeof(tmpl), "%s/cbottleneck-dump-XXXXXX", tmp);
	if (!mkdtemp(tmpl)) {
		fprintf(stderr, "cbottleneck: ctl: cannot create a directory in %s for the copy: %s; "
			"run cbottleneck report %s after the program ends\n", tmp, strerror(errno),
			session);
		return CTL_EXIT_ERROR;
	}
	d = opendir(session);
	while (d && (e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);

		/* the agents' files, and the launcher's side files beside them */
		side = len > sext && !strcmp(e->d_name + len - sext, CBN_SIDE_EXT);
		if (!side && (len <= ext || strcmp(e->d_name + len - ext, CBN_FILE_EXT)))
			continue;
		snprintf(from, sizeof(from), "%s/%s", session, e->d_name);
		snprintf(to, sizeof(to), "%s/%s", tmpl, e->d_name);
		if (ctl_copy_file(from, to) == 0)
			copied += !side;
		else
			unlink(to);
	}
	if (d)
		closedir(d);
	if (!copied) {
		fprintf(stderr, "cbottleneck: ctl: no session file of process %ld could be read in "
			"%s\n", pid, session);
		ret = CTL_EXIT_ERROR;
	} else {
		/* the JIT code's names as they stand (the program still writes them) */
		jitmaps_collect(tmpl, 0);
		fprintf(stderr, "cbottleneck: ctl: report of what was recorded so far (session %s; "
			"the program still runs)\n", session);
		fflush(stderr);
		cli_opts_defaults(&o, CLI_MODE_REPORT);
		o.quiet = 1;
		ret = cli_report_dir(&o, tmpl);
		cli_opts_free(&o);
		/* 1: partial, as a running program's files are. */
		ret = ret <= 1 ? 0 : CTL_EXIT_ERROR;
	}
	d = opendir(tmpl);
	while (d && (e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(to, sizeof(to), "%s/%s", tmpl, e->d_name);
		unlink(to);
	}
	if (d)
		closedir(d);
	rmdir(tmpl);
	return ret;
}

int cmd_ctl(int argc, char **argv)
{
	char session[PATH_MAX], line[512], answer[1024], *end;
	const char *cmd;
	int fd, ret, i;
	long pid;

	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(ctl_usage_text, stdout);
		return 0;
	}
	if (argc < 3)
		return ctl_usage("needs a process id and a command: cbottleneck ctl PID %s",
				 "start|stop|mark NAME|dump|status");
	errno = 0;
	pid = strtol(argv[1], &end, 10);
	if (errno || end == argv[1] || *end || pid <= 0 || pid > INT_MAX)
		return ctl_usage("'%s' is not a process id", argv[1]);
	cmd = argv[2];
	if (!strcmp(cmd, "mark")) {
		if (argc != 4 || !argv[3][0])
			return ctl_usage("mark needs one NAME: cbottleneck ctl PID mark %s", "NAME");
		if (strpbrk(argv[3], "\n\r") || strlen(argv[3]) > 120)
			return ctl_usage("mark %s: a name is one line of at most 120 bytes", argv[3]);
		snprintf(line, sizeof(line), "mark %s\n", argv[3]);
	} else if (!strcmp(cmd, "start") || !strcmp(cmd, "stop") || !strcmp(cmd, "dump") ||
		   !strcmp(cmd, "status")) {
		if (argc != 3)
			return ctl_usage("%s takes no argument", cmd);
		snprintf(line, sizeof(line), "%s\n", cmd);
	} else {
		return ctl_usage("unknown command '%s': expected start, stop, mark NAME, dump or "
				 "status", cmd);
	}
	if (cli_args_only())
		return 0;
	ret = ctl_find_session(pid, session, sizeof(session));
	if (ret)
		return ret;
	fd = ctl_connect(session, pid);
	/* The launcher makes a process's socket when it sees the process's
	 * file: a process started a moment ago may not have it yet. */
	for (i = 0; fd == -ENOENT && i < CTL_WAIT_SOCKET_MS / 10; i++) {
		struct timespec ms10 = {0, 10000000};

		nanosleep(&ms10, NULL);
		fd = ctl_connect(session, pid);
	}
	if (fd == -ENOENT) {
		fprintf(stderr, "cbottleneck: ctl: process %ld has no control socket; it has one "
			"when run with a capture control (--delay, --duration, --schedule, "
			"--capture-range) or with CBN_CTL=1 in cbottleneck's environment\n", pid);
		return CTL_EXIT_NOPROC;
	}
	if (fd == -ECONNREFUSED) {
		fprintf(stderr, "cbottleneck: ctl: nobody answers on %s/%s/%ld.sock: process %ld "
			"ended, or closed its control socket\n", session, CBN_CTL_DIR, pid, pid);
		return CTL_EXIT_NOPROC;
	}
	if (fd < 0) {
		fprintf(stderr, "cbottleneck: ctl: cannot reach the control socket of process %ld "
			"in %s/%s: %s\n", pid, session, CBN_CTL_DIR,
			fd == -EPERM ? "not a private directory of yours" : strerror(-fd));
		return CTL_EXIT_NOPROC;
	}
	ret = ctl_exchange(fd, line, answer, sizeof(answer));
	close(fd);
	if (ret < 0) {
		fprintf(stderr, "cbottleneck: ctl: process %ld did not answer: %s\n", pid,
			ret == -EAGAIN ? "timed out" : strerror(-ret));
		return CTL_EXIT_NOPROC;
	}
	if (strncmp(answer, "ok", 2) != 0) {
		fprintf(stderr, "cbottleneck: ctl: process %ld: %s\n", pid, answer);
		return CTL_EXIT_ERROR;
	}
	printf("%s\n", answer);
	fflush(stdout);
	if (!strcmp(cmd, "dump"))
		return ctl_report_copy(session, pid);
	return 0;
}
