/*
 * attach_proc.c — what /proc says of a running process we did not start: is
 * it there and ours to read, its threads and their names, where a blocked
 * thread is (its system call, stack pointer and pc, from
 * /proc/PID/task/TID/syscall: read without stopping the thread) and a copy
 * of the top of its stack (process_vm_readv).  When a read is refused, the
 * reason in words: the owner, Yama's ptrace_scope, the dumpable flag.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "util.h"

static int proc_task_read(pid_t pid, pid_t tid, const char *what, char *buf, size_t len)
{
	char path[96];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)pid, (int)tid, what);
	return util_read_small(path, buf, len);
}

/* The process's state letter (/proc/PID/stat, after the command's ')'). */
static int proc_state(pid_t pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (util_read_small(path, buf, sizeof(buf)) <= 0 || !(p = strrchr(buf, ')')) || !p[1])
		return 0;
	return p[2];
}

/* 1 when pid is a kernel thread (PF_KTHREAD in /proc/PID/stat's flags). */
static int proc_kernel_thread(pid_t pid)
{
	char path[64], buf[512], *p;
	unsigned long flags;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (util_read_small(path, buf, sizeof(buf)) <= 0 || !(p = strrchr(buf, ')')) ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return 0;
	return (flags & 0x00200000ul) != 0; /* PF_KTHREAD, include/linux/sched.h */
}

pid_t attach_proc_ppid(pid_t pid)
{
	char path[64], buf[512], *p;
	int ppid = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (util_read_small(path, buf, sizeof(buf)) > 0 && (p = strrchr(buf, ')')) != NULL &&
	    sscanf(p + 1, " %*c %d", &ppid) != 1)
		ppid = 0;
	return (pid_t)ppid;
}

int attach_proc_alive(pid_t pid)
{
	int state = proc_state(pid);

	return state && state != 'Z' && state != 'X';
}

int attach_proc_check(pid_t pid, char *why, size_t len)
{
	char path[64], buf[256];
	struct stat st;
	int ret, state;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (pid <= 0 || stat(path, &st) < 0) {
		snprintf(why, len, "no process %d", (int)pid);
		return -ESRCH;
	}
	state = proc_state(pid);
	if (proc_kernel_thread(pid)) {
		snprintf(why, len, "process %d is a kernel thread: it runs no user code to read",
			 (int)pid);
		return -EINVAL;
	}
	if (state == 'Z' || state == 'X') {
		snprintf(why, len, "process %d has exited (its parent has not reaped it yet)", (int)pid);
		return -ESRCH;
	}
	/* The syscall file asks what process_vm_readv asks (ptrace attach
	 * rights), without touching the process. */
	ret = proc_task_read(pid, pid, "syscall", buf, sizeof(buf));
	if (ret == -EPERM || ret == -EACCES) {
		attach_proc_refusal(pid, ret, why, len);
		return ret;
	}
	if (ret < 0 && stat(path, &st) < 0) {
		snprintf(why, len, "process %d exited while cbottleneck attached", (int)pid);
		return -ESRCH;
	}
	if (ret < 0 && ret != -ESRCH) {
		snprintf(why, len, "cannot read /proc/%d/task/%d/syscall: %s", (int)pid, (int)pid,
			 strerror(-ret));
		return ret;
	}
	return 0;
}

/* 0 when pid no longer has its memory (it is exiting: /proc/PID/status
 * lists no VmSize then, as for a kernel thread), 1 when it has, -1 unknown. */
static int proc_has_mm(pid_t pid)
{
	char path[64], buf[4096];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (util_read_small(path, buf, sizeof(buf)) <= 0)
		return -1;
	return strstr(buf, "\nVmSize:") != NULL;
}

int attach_proc_unreadable(pid_t pid, char *why, size_t len)
{
	int ret = attach_proc_check(pid, why, len);

	if (ret < 0)
		return ret;
	if (proc_has_mm(pid) <= 0) {
		snprintf(why, len, "process %d exited while cbottleneck attached", (int)pid);
		return -ESRCH;
	}
	snprintf(why, len, "cannot read the modules of process %d (/proc/%d/maps)", (int)pid,
		 (int)pid);
	return -EIO;
}

/* A process in the middle of execve has its old memory gone and its new
 * maps not all there yet for a few milliseconds: a read of its modules that
 * failed is tried again, this many times, this far apart. */
#define PROC_AGAIN_TRIES 10
#define PROC_AGAIN_NS 10000000L

int attach_proc_again(pid_t pid, int *tries)
{
	struct timespec ts = {0, PROC_AGAIN_NS};

	if (++*tries > PROC_AGAIN_TRIES || !attach_proc_alive(pid))
		return 0;
	nanosleep(&ts, NULL);
	return 1;
}

static int proc_tid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

int attach_proc_threads(pid_t pid, pid_t **tids)
{
	size_t n = 0, cap = 0;
	pid_t *t = NULL, *g;
	char path[64];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((e = readdir(d)) != NULL) {
		long tid = strtol(e->d_name, NULL, 10);

		if (tid <= 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			g = realloc(t, cap * sizeof(*t));
			if (!g) {
				free(t);
				closedir(d);
				return -ENOMEM;
			}
			t = g;
		}
		t[n++] = (pid_t)tid;
	}
	closedir(d);
	if (n)
		qsort(t, n, sizeof(*t), proc_tid_cmp);
	*tids = t;
	return n ? (int)n : -ESRCH;
}

void attach_proc_name(pid_t pid, pid_t tid, char *name, size_t len)
{
	if (proc_task_read(pid, tid, "comm", name, len) <= 0)
		name[0] = 0;
	name[strcspn(name, "\n")] = 0;
}

void attach_proc_cmdline(pid_t pid, char *out, size_t len)
{
	char path[64];
	int n, i;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	n = util_read_small(path, out, len);
	if (n <= 0) {
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		if (util_read_small(path, out, len) <= 0)
			out[0] = 0;
		out[strcspn(out, "\n")] = 0;
		return;
	}
	while (n > 0 && out[n - 1] == 0)
		n--;
	for (i = 0; i < n; i++)
		if (out[i] == 0)
			out[i] = ' ';
	out[n] = 0;
}

/* "running", or "NR A0..A5 SP PC" (hex), or "-1 SP PC" outside a call. */
int attach_proc_where(pid_t pid, pid_t tid, struct attach_where *w)
{
	char buf[256], *p, *end;
	uint64_t v[8];
	int n = 0;

	memset(w, 0, sizeof(*w));
	if (proc_task_read(pid, tid, "syscall", buf, sizeof(buf)) <= 0 || buf[0] == 'r')
		return 0;
	w->nr = strtoll(buf, &p, 10);
	for (; n < 8; n++, p = end) {
		v[n] = strtoull(p, &end, 16);
		if (end == p)
			break;
	}
	if (w->nr < 0 && n >= 2) {
		w->sp = v[0];
		w->pc = v[1];
	} else if (n == 8) {
		w->sp = v[6];
		w->pc = v[7];
	} else {
		return 0;
	}
	w->state = 1;
	return 1;
}

const char *attach_proc_syscall_name(int64_t nr)
{
	static const struct {
		long nr;
		const char *name;
	} names[] = {
		{SYS_read, "read"}, {SYS_write, "write"}, {SYS_futex, "futex"},
		{SYS_nanosleep, "nanosleep"}, {SYS_clock_nanosleep, "clock_nanosleep"},
		{SYS_ppoll, "ppoll"}, {SYS_pselect6, "pselect6"}, {SYS_epoll_pwait, "epoll_pwait"},
		{SYS_wait4, "wait4"}, {SYS_waitid, "waitid"}, {SYS_accept, "accept"},
		{SYS_accept4, "accept4"}, {SYS_recvfrom, "recvfrom"}, {SYS_recvmsg, "recvmsg"},
		{SYS_sendto, "sendto"}, {SYS_sendmsg, "sendmsg"}, {SYS_connect, "connect"},
		{SYS_rt_sigsuspend, "rt_sigsuspend"}, {SYS_rt_sigtimedwait, "rt_sigtimedwait"},
		{SYS_pread64, "pread64"}, {SYS_pwrite64, "pwrite64"}, {SYS_fsync, "fsync"},
		{SYS_openat, "openat"}, {SYS_flock, "flock"}, {SYS_fcntl, "fcntl"},
#ifdef SYS_poll
		{SYS_poll, "poll"},
#endif
#ifdef SYS_select
		{SYS_select, "select"},
#endif
#ifdef SYS_epoll_wait
		{SYS_epoll_wait, "epoll_wait"},
#endif
#ifdef SYS_pause
		{SYS_pause, "pause"},
#endif
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].nr == nr)
			return names[i].name;
	return NULL;
}

/* m's mappings read again from /proc/PID/maps: 0, or -1. */
static int proc_maps_read(struct attach_maps *m)
{
	char path[64], line[512];
	unsigned long long lo, hi;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)m->pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	m->n = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx", &lo, &hi) != 2)
			continue;
		if (util_grow((void **)&m->range, &m->cap, 2 * (m->n + 1), sizeof(*m->range)) < 0)
			break;
		m->range[2 * m->n] = lo;
		m->range[2 * m->n + 1] = hi;
		m->n++;
	}
	fclose(f);
	m->read = 1;
	return 0;
}

/* The end of the mapping holding addr, 0: none. */
static uint64_t proc_map_end(struct attach_maps *m, uint64_t addr)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (addr >= m->range[2 * i] && addr < m->range[2 * i + 1])
			return m->range[2 * i + 1];
	return 0;
}

size_t attach_proc_stack(struct attach_maps *m, uint64_t sp, void *dst, size_t len)
{
	struct iovec local, remote;
	uint64_t end = 0;
	ssize_t n;

	if (m->read)
		end = proc_map_end(m, sp);
	/* Not read yet, or a stack mapped since (a new thread's). */
	if (!end && proc_maps_read(m) == 0)
		end = proc_map_end(m, sp);
	if (!end)
		return 0;
	if (end - sp < len)
		len = (size_t)(end - sp);
	local.iov_base = dst;
	local.iov_len = len;
	remote.iov_base = (void *)(uintptr_t)sp;
	remote.iov_len = len;
	/* A mapping gone since it was read: the kernel copies up to the
	 * first page it cannot read and says how much. */
	n = process_vm_readv(m->pid, &local, 1, &remote, 1, 0);
	return n > 0 ? (size_t)n : 0;
}

void attach_maps_free(struct attach_maps *m)
{
	free(m->range);
	m->range = NULL;
	m->n = m->cap = 0;
	m->read = 0;
}

void attach_proc_refusal(pid_t pid, int err, char *why, size_t len)
{
	char path[64], buf[32];
	struct stat st;
	int scope = -1;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st) == 0 && st.st_uid != geteuid()) {
		snprintf(why, len,
			 "process %d belongs to user %u: run cbottleneck as that user, or as root",
			 (int)pid, (unsigned)st.st_uid);
		return;
	}
	if (util_read_small("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof(buf)) > 0)
		scope = atoi(buf);
	if (scope >= 1 && geteuid() != 0) {
		snprintf(why, len,
			 "Yama's ptrace_scope is %d, so only a parent or root may read process %d: "
			 "run as root, or set kernel.yama.ptrace_scope=0 (sysctl)",
			 scope, (int)pid);
		return;
	}
	snprintf(why, len,
		 "process %d may not be read (%s): it is not dumpable (setuid, or "
		 "prctl(PR_SET_DUMPABLE, 0)); run cbottleneck as root",
		 (int)pid, strerror(-err));
}
