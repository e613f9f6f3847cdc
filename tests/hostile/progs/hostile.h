/*
 * hostile.h — shared helpers of the hostile-program suite: CPU burners, and the
 * program's own view of its fds, threads and signals printed as deterministic
 * text (no pids, tids, addresses or timings), so that run.sh can compare a
 * plain run with a profiled one byte for byte.  Header-only; every function is
 * static and may go unused.  Output goes through say(), which flushes at once:
 * programs crash, _exit, fork and exec, and must never lose or duplicate a line.
 */
#ifndef HOSTILE_H
#define HOSTILE_H

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HOSTILE_FN __attribute__((unused, noinline))
#define HOSTILE_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* printf to stdout and flush: every line is out before anything can go wrong. */
HOSTILE_FN HOSTILE_PRINTF(1, 2) static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

/* An unexpected failure of the test program itself (not of the profiler):
 * says so on stderr and exits 1. */
HOSTILE_FN HOSTILE_PRINTF(1, 2) static void die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	fprintf(stderr, "hostile: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (errno %s)\n", strerrorname_np(errno) ? strerrorname_np(errno) : "0");
	exit(1);
}

/* The program cannot run here (a tool is missing): run.sh turns exit 77 of
 * the plain run into a skip, with this line as the reason. */
HOSTILE_FN HOSTILE_PRINTF(1, 2) static void skip(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	fprintf(stderr, "SKIP: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(77);
}

HOSTILE_FN static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

HOSTILE_FN static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* About 20-50 microseconds of pure computation: no syscall, no errno. */
HOSTILE_FN static uint64_t burn_chunk(uint64_t x)
{
	volatile uint64_t v = x | 1;

	for (int i = 0; i < 20000; i++)
		v = v * 6364136223846793005ull + 1442695040888963407ull;
	return v;
}

/* Busy loop until this thread has used `seconds` more CPU time. */
HOSTILE_FN static uint64_t burn_cpu(double seconds)
{
	double end = thread_cpu() + seconds;
	uint64_t x = 1;

	while (thread_cpu() < end)
		x = burn_chunk(x);
	return x;
}

/* One level of burn_cpu_deep: a 1 KiB frame, so a deep stack spans pages. */
HOSTILE_FN static uint64_t burn_deep_level(int depth, double slice)
{
	volatile char pad[1024];
	uint64_t r;

	pad[0] = (char)depth;
	pad[sizeof(pad) - 1] = (char)depth;
	if (depth <= 0)
		r = burn_cpu(slice);
	else
		r = burn_deep_level(depth - 1, slice);
	return r + (uint64_t)pad[0] + (uint64_t)pad[sizeof(pad) - 1];
}

/* Burn `seconds` of thread CPU in 2 ms slices taken at stack depths cycling
 * through 0..max_kib KiB, so a sampler's unwinder walks many stack pages. */
HOSTILE_FN static uint64_t burn_cpu_deep(double seconds, int max_kib)
{
	double end = thread_cpu() + seconds;
	uint64_t x = 0;
	int d = 0;

	while (thread_cpu() < end) {
		x += burn_deep_level(d, 0.002);
		d = (d + 7) % (max_kib + 1);
	}
	return x;
}

/* FNV-1a, for printing a checksum of a buffer or file. */
HOSTILE_FN static uint64_t fnv1a(const void *p, size_t n, uint64_t h)
{
	const unsigned char *c = (const unsigned char *)p;

	if (!h)
		h = 14695981039346656037ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 1099511628211ull;
	return h;
}

/* The directory holding this executable (and the suite's helper programs). */
HOSTILE_FN static const char *hostile_bindir(void)
{
	static char dir[PATH_MAX];
	ssize_t n;

	if (dir[0])
		return dir;
	n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (n <= 0)
		die("readlink /proc/self/exe");
	dir[n] = 0;
	*strrchr(dir, '/') = 0;
	return dir;
}

HOSTILE_FN static int hostile_cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* What fd `fd` is, as a word that does not depend on the run: a path relative
 * to the cwd when inside it, /dev/..., pipe, socket, anon:<type>, dir or file. */
HOSTILE_FN static void hostile_fd_kind(int fd, char *out, size_t outsz)
{
	char link[64], target[PATH_MAX], cwd[PATH_MAX];
	size_t cl;
	ssize_t n;
	struct stat st;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0) {
		snprintf(out, outsz, "?");
		return;
	}
	target[n] = 0;
	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = 0;
	cl = strlen(cwd);
	if (!strncmp(target, "pipe:", 5)) {
		snprintf(out, outsz, "pipe");
	} else if (!strncmp(target, "socket:", 7)) {
		snprintf(out, outsz, "socket");
	} else if (!strncmp(target, "anon_inode:", 11)) {
		char *t = target + 11;

		if (*t == '[')
			t++;
		t[strcspn(t, "]")] = 0;
		snprintf(out, outsz, "anon:%s", t);
	} else if (!strncmp(target, "/dev/pts/", 9) || !strcmp(target, "/dev/tty")) {
		snprintf(out, outsz, "tty");
	} else if (!strncmp(target, "/dev/", 5)) {
		snprintf(out, outsz, "%s", target);
	} else if (cl > 1 && !strncmp(target, cwd, cl) && target[cl] == '/') {
		snprintf(out, outsz, "%s", target + cl + 1);
	} else if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(out, outsz, "dir");
	} else {
		snprintf(out, outsz, "file");
	}
}

/* fds[tag]: every open fd (but the listing's own) with its kind. */
HOSTILE_FN static void print_fds(const char *tag)
{
	int fds[4096], n = 0, saved = errno;
	char kind[PATH_MAX + 16], line[16384];
	size_t len;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	if (!d)
		die("opendir /proc/self/fd");
	while ((e = readdir(d)) && n < 4096) {
		if (e->d_name[0] == '.')
			continue;
		if (atoi(e->d_name) == dirfd(d))
			continue;
		fds[n++] = atoi(e->d_name);
	}
	closedir(d);
	qsort(fds, (size_t)n, sizeof(int), hostile_cmp_int);
	len = (size_t)snprintf(line, sizeof(line), "fds[%s]:", tag);
	for (int i = 0; i < n && len < sizeof(line) - 1; i++) {
		hostile_fd_kind(fds[i], kind, sizeof(kind));
		len += (size_t)snprintf(line + len, sizeof(line) - len, " %d=%s", fds[i], kind);
	}
	say("%s\n", line);
	errno = saved;
}

/* Entries of /proc/self/task and the Threads: line of /proc/self/status. */
HOSTILE_FN static void hostile_count_threads(int *tasks, int *status)
{
	char buf[256];
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	FILE *f;

	if (!d)
		die("opendir /proc/self/task");
	*tasks = 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			(*tasks)++;
	closedir(d);
	f = fopen("/proc/self/status", "r");
	if (!f)
		die("fopen /proc/self/status");
	*status = -1;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "Threads: %d", status) == 1)
			break;
	fclose(f);
}

/* threads[tag]: the thread counts.  A thread that pthread_join has just
 * reaped stays listed until it runs the rest of its exit in the kernel, which
 * on a loaded machine can wait several scheduler ticks (a run under load once
 * counted it after two readings 2 ms apart agreed), so the counts are read
 * until five readings 5 ms apart agree (at most about 2 s). */
HOSTILE_FN static void print_threads(const char *tag)
{
	int tasks, status, t2, s2, same = 0, saved = errno;

	hostile_count_threads(&tasks, &status);
	for (int i = 0; i < 400 && same < 4; i++) {
		struct timespec ms5 = {0, 5000000};

		nanosleep(&ms5, NULL);
		hostile_count_threads(&t2, &s2);
		same = t2 == tasks && s2 == status ? same + 1 : 0;
		tasks = t2;
		status = s2;
	}
	say("threads[%s]: tasks=%d Threads=%d\n", tag, tasks, status);
	errno = saved;
}

/* "USR1", "RTMIN+3": a signal's name that does not depend on the libc. */
HOSTILE_FN static const char *sig_name(int sig)
{
	static char buf[4][32];
	static int k;
	char *b = buf[k++ & 3];

	if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		snprintf(b, 32, "RTMIN+%d", sig - SIGRTMIN);
	else if (sigabbrev_np(sig))
		snprintf(b, 32, "%s", sigabbrev_np(sig));
	else
		snprintf(b, 32, "SIG%d", sig);
	return b;
}

/* Append the members of `set` (1..SIGRTMAX) to b as NAME,NAME (three or
 * more consecutive numbers as FIRST..LAST) or "none". */
HOSTILE_FN static size_t sigset_str(const sigset_t *set, char *b, size_t sz)
{
	size_t len = 0;

	for (int s = 1; s <= SIGRTMAX && len < sz; s++) {
		int e = s;

		if (sigismember(set, s) != 1)
			continue;
		while (e + 1 <= SIGRTMAX && sigismember(set, e + 1) == 1)
			e++;
		if (e - s >= 2) {
			len += (size_t)snprintf(b + len, sz - len, "%s%s..%s", len ? "," : "",
			                        sig_name(s), sig_name(e));
			s = e;
		} else {
			len += (size_t)snprintf(b + len, sz - len, "%s%s", len ? "," : "",
			                        sig_name(s));
		}
	}
	if (!len)
		len = (size_t)snprintf(b, sz, "none");
	return len;
}

/* Which module a handler lives in: "exe" for the program, else the library's
 * base name (a handler that shows up in another library is not the program's). */
HOSTILE_FN static const char *handler_module(void *fn)
{
	static char buf[256];
	Dl_info me, it;

	if (!dladdr((void *)handler_module, &me) || !dladdr(fn, &it) || !it.dli_fname)
		return "unknown";
	if (it.dli_fbase == me.dli_fbase)
		return "exe";
	snprintf(buf, sizeof(buf), "%s",
	         strrchr(it.dli_fname, '/') ? strrchr(it.dli_fname, '/') + 1 : it.dli_fname);
	return buf;
}

/*
 * signals[tag]: for 1..SIGRTMAX, the dispositions that are not SIG_DFL (IGN, or
 * a handler with its module, flags and sa_mask), the calling thread's blocked
 * set, the pending set and the sigaltstack state, as the program reads them
 * through the libc API.  SA_RESTORER is glibc's own business and not shown.
 */
HOSTILE_FN static void print_signals(const char *tag)
{
	static char line[32768];
	size_t len;
	sigset_t set;
	stack_t ss;
	int saved = errno, any = 0;
	static const struct {
		unsigned long flag;
		const char *name;
	} flags[] = {{SA_SIGINFO, "info"},        {SA_RESTART, "restart"},
	             {SA_ONSTACK, "onstack"},     {SA_NODEFER, "nodefer"},
	             {SA_RESETHAND, "resethand"}, {SA_NOCLDSTOP, "nocldstop"},
	             {SA_NOCLDWAIT, "nocldwait"}};

	len = (size_t)snprintf(line, sizeof(line), "signals[%s]: disp=", tag);
	for (int s = 1; s <= SIGRTMAX; s++) {
		struct sigaction sa;
		unsigned long rest;
		void *fn;

		if (sigaction(s, NULL, &sa) < 0)
			continue; /* 32, 33: glibc's own */
		fn = (sa.sa_flags & SA_SIGINFO) ? (void *)sa.sa_sigaction : (void *)sa.sa_handler;
		if (!(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL)
			continue;
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s=", any++ ? "," : "",
		                        sig_name(s));
		if (!(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_IGN) {
			len += (size_t)snprintf(line + len, sizeof(line) - len, "IGN");
			continue;
		}
		len +=
		    (size_t)snprintf(line + len, sizeof(line) - len, "H@%s(", handler_module(fn));
		rest = (unsigned int)sa.sa_flags & ~0x04000000ul; /* SA_RESTORER */
		for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
			if ((unsigned int)sa.sa_flags & flags[i].flag) {
				len += (size_t)snprintf(line + len, sizeof(line) - len, "%s ",
				                        flags[i].name);
				rest &= ~flags[i].flag;
			}
		if (rest)
			len += (size_t)snprintf(line + len, sizeof(line) - len, "0x%lx ", rest);
		len += (size_t)snprintf(line + len, sizeof(line) - len, "mask:");
		len += sigset_str(&sa.sa_mask, line + len, sizeof(line) - len);
		len += (size_t)snprintf(line + len, sizeof(line) - len, ")");
	}
	if (!any)
		len += (size_t)snprintf(line + len, sizeof(line) - len, "all-default");
	pthread_sigmask(SIG_BLOCK, NULL, &set);
	len += (size_t)snprintf(line + len, sizeof(line) - len, " blocked=");
	len += sigset_str(&set, line + len, sizeof(line) - len);
	sigpending(&set);
	len += (size_t)snprintf(line + len, sizeof(line) - len, " pending=");
	len += sigset_str(&set, line + len, sizeof(line) - len);
	if (sigaltstack(NULL, &ss) < 0)
		snprintf(line + len, sizeof(line) - len, " altstack=error");
	else if (ss.ss_flags & SS_DISABLE)
		snprintf(line + len, sizeof(line) - len, " altstack=disabled");
	else
		snprintf(line + len, sizeof(line) - len, " altstack=size:%zu%s", ss.ss_size,
		         (ss.ss_flags & SS_ONSTACK) ? ",onstack" : "");
	say("%s\n", line);
	errno = saved;
}

HOSTILE_FN static void print_rlimit_nofile(void)
{
	struct rlimit r;

	getrlimit(RLIMIT_NOFILE, &r);
	say("rlimit_nofile: soft=%llu hard=%llu\n", (unsigned long long)r.rlim_cur,
	    (unsigned long long)r.rlim_max);
}

/* The usual opening and closing views. */
HOSTILE_FN static void print_views(const char *tag)
{
	print_fds(tag);
	print_threads(tag);
	print_signals(tag);
}

HOSTILE_FN static int hostile_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* comm[tag]: the sorted names of every task of the process. */
HOSTILE_FN static void print_comms(const char *tag)
{
	char *names[256], path[300], buf[64];
	char line[4096];
	size_t len;
	int n = 0;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	if (!d)
		die("opendir");
	while ((e = readdir(d)) && n < 256) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f)) {
			buf[strcspn(buf, "\n")] = 0;
			names[n++] = strdup(buf);
		}
		fclose(f);
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof(char *), hostile_cmp_str);
	len = (size_t)snprintf(line, sizeof(line), "comm[%s]:", tag);
	for (int i = 0; i < n; i++) {
		len += (size_t)snprintf(line + len, sizeof(line) - len, " %s", names[i]);
		free(names[i]);
	}
	say("%s\n", line);
}

#endif
