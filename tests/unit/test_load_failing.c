/*
 * test_load_failing.c — the loader when one allocation fails, for every
 * allocation it makes.  This executable replaces malloc and its family
 * (glibc lets a program do so; libc's and elfutils' own calls come here
 * too) with versions that count the blocks alive and can fail the Nth call
 * made from the project's code.  For every N up to the number of such calls
 * one load makes, a child loads a session, frees the profile and checks: a
 * load status, never a crash; when it says out of memory, no profile and an
 * "out of memory" message; in every case no block and no file descriptor
 * left behind.  Two sessions: a file with every record type and real
 * symbols (this executable as a module), and a real run of Debian's Python
 * (calls counted, host memory, kernel time) when the launcher is built.
 * Skipped under AddressSanitizer, whose own malloc this one would fight.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "test_reader_synth.h"
#include "load.h"

static long calls, live, fail_at = -1;

/* This executable's code: the allocations made from there (the project's
 * code is linked in statically) are the ones counted and failed.  Those that
 * elfutils makes are not: libdw's answer to a failed allocation is to exit
 * or assert (__libdw_oom), which no caller can change. */
static uintptr_t own_lo, own_hi;

#if !SANITIZED
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t m);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t align, size_t n);
void __libc_free(void *p);

/* 1 when this call, made from ret, is the one to fail. */
static int failing(const void *ret)
{
	if ((uintptr_t)ret < own_lo || (uintptr_t)ret >= own_hi)
		return 0;
	return calls++ == fail_at;
}

void *malloc(size_t n)
{
	void *p = failing(__builtin_return_address(0)) ? NULL : __libc_malloc(n);

	live += p != NULL;
	return p;
}

void *calloc(size_t n, size_t m)
{
	void *p = failing(__builtin_return_address(0)) ? NULL : __libc_calloc(n, m);

	live += p != NULL;
	return p;
}

void *realloc(void *old, size_t n)
{
	void *p;

	if (old && n == 0) {
		live--;
		return __libc_realloc(old, 0);
	}
	p = failing(__builtin_return_address(0)) ? NULL : __libc_realloc(old, n);
	live += p != NULL && !old;
	return p;
}

void *reallocarray(void *old, size_t n, size_t m)
{
	if (m && n > SIZE_MAX / m) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(old, n * m);
}

void *memalign(size_t align, size_t n)
{
	void *p = failing(__builtin_return_address(0)) ? NULL : __libc_memalign(align, n);

	live += p != NULL;
	return p;
}

void *aligned_alloc(size_t align, size_t n)
{
	return memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p = memalign(align, n);

	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void free(void *p)
{
	live -= p != NULL;
	__libc_free(p);
}
#endif

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

enum { EXIT_LEAK = 90, EXIT_FD_LEAK = 91, EXIT_NOMEM_PROFILE = 92, EXIT_BASE = 10 };

/* Load dir with the nth allocation failing (-1: none) in a child; its wait status. */
static int load_failing(const char *dir, long nth)
{
	pid_t pid = fork();
	int st = 0;

	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct profile *p = NULL;
		char err[512];
		long live0;
		int fds0, ret;

		fds0 = open_fds();
		live0 = live;
		calls = 0;
		fail_at = nth;
		ret = prof_load(dir, &p, err, sizeof(err));
		fail_at = -1;
		if (ret == PROF_LOAD_NOMEM && (p != NULL || !strstr(err, "out of memory")))
			_exit(EXIT_NOMEM_PROFILE);
		prof_free(p);
		if (live != live0)
			_exit(EXIT_LEAK);
		if (open_fds() != fds0)
			_exit(EXIT_FD_LEAK);
		_exit(EXIT_BASE + 8 + ret); /* PROF_LOAD_* are 0 and small negatives */
	}
	REQUIRE(waitpid(pid, &st, 0) == pid);
	return st;
}

/* Every allocation of one load of dir failed in turn (every stride-th one
 * when a load makes more than limit); 0 when each went right. */
static long fail_each(const char *dir, long limit)
{
	struct profile *p = NULL;
	char err[512];
	long n, total, stride, nomem = 0, bad = 0, tried = 0;
	int st;

	/* How many allocations a whole load makes (one load first: what the
	 * process keeps for good, stdio's buffers, is made then). */
	REQUIRE(prof_load(dir, &p, err, sizeof(err)) >= 0);
	prof_free(p);
	calls = 0;
	REQUIRE(prof_load(dir, &p, err, sizeof(err)) >= 0);
	total = calls;
	prof_free(p);
	CHECK(total > 100);
	st = load_failing(dir, -1);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) >= EXIT_BASE && WEXITSTATUS(st) < EXIT_LEAK);
	if (WIFEXITED(st) && WEXITSTATUS(st) == EXIT_LEAK)
		fprintf(stderr, "a load with no failure leaves blocks behind\n");

	stride = total > limit ? (total + limit - 1) / limit : 1;
	for (n = 0; n < total; n += stride, tried++) {
		int code;

		st = load_failing(dir, n);
		if (!WIFEXITED(st)) {
			fprintf(stderr, "allocation %ld failing: the loader died of signal %d\n", n,
				WIFSIGNALED(st) ? WTERMSIG(st) : 0);
			bad++;
			continue;
		}
		code = WEXITSTATUS(st);
		if (code == EXIT_BASE + 8 + PROF_LOAD_NOMEM)
			nomem++;
		if (code >= EXIT_LEAK || code < EXIT_BASE) {
			fprintf(stderr, "allocation %ld failing: %s\n", n,
				code == EXIT_LEAK ? "blocks left behind" :
				code == EXIT_FD_LEAK ? "a file descriptor left open" :
				code == EXIT_NOMEM_PROFILE ? "out of memory with a profile or no message" :
				"no load status");
			bad++;
		}
	}
	printf("%s: %ld allocations in a load; %ld failed one at a time: %ld said out of memory, "
	       "%ld went wrong\n", dir, total, tried, nomem, bad);
	CHECK(nomem > tried / 2);
	return bad;
}

/* A real session: Debian's Python under the launcher, with its calls
 * counted, host memory and kernel time (a read loop); 0 when recorded. */
static int record_python(const char *dir)
{
	static const char script[] =
		"import os, time\n"
		"def leaf(n): return sum(i * i for i in range(n))\n"
		"def io():\n"
		"    fd = os.open('/dev/zero', os.O_RDONLY)\n"
		"    for _ in range(2000): os.read(fd, 4096)\n"
		"    os.close(fd)\n"
		"t = time.time()\n"
		"while time.time() - t < 0.3:\n"
		"    [leaf(200) for _ in range(20)]; io(); sorted(str(i) for i in range(2000))\n";
	char cbn[512];
	pid_t pid;
	int st = 0;

	if (!getenv("CBN_BUILD_DIR") || access("/usr/bin/python3", X_OK) != 0)
		return -1;
	snprintf(cbn, sizeof(cbn), "%s/cbottleneck", getenv("CBN_BUILD_DIR"));
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execl(cbn, cbn, "-q", "-o", dir, "--calls", "--memory=host", "-F", "499",
		      "/usr/bin/python3", "-c", script, (char *)NULL);
		_exit(127);
	}
	REQUIRE(waitpid(pid, &st, 0) == pid);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int main(void)
{
	char dir[] = "/tmp/cbn-test-load-failing-XXXXXX", path[300], real[320];
	uint64_t rng = 0x243f6a8885a308d3ull;
	struct synth_self me;
	struct synth s;

	if (SANITIZED) {
		fprintf(stderr, "skip: AddressSanitizer's malloc cannot be replaced\n");
		return TEST_SKIP;
	}
	REQUIRE(synth_self_find(&me) == 0);
	own_lo = me.lo;
	own_hi = me.hi;
	synth_all_with_self(&s, &me, &rng);
	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/100.0.cbp", dir);
	REQUIRE(synth_write(&s, path) == 0);
	synth_free(&s);
	CHECK(fail_each(dir, 100000) == 0);
	unlink(path);

	snprintf(real, sizeof(real), "%s/py", dir);
	if (record_python(real) == 0)
		CHECK(fail_each(real, 1500) == 0);
	else
		printf("no Python session recorded (no launcher or no /usr/bin/python3)\n");
	if (fork() == 0) {
		execlp("rm", "rm", "-rf", dir, (char *)NULL);
		_exit(127);
	}
	wait(NULL);
	return test_result();
}
