/*
 * sigcheck.c — linked only into the test copy of the agent
 * (tests/agent/sigcheck/libcbottleneck.so, CBN_SIGPATH_CHECK): it interposes
 * malloc, calloc, realloc, free and pthread_mutex_lock for the whole process
 * and aborts when one of them runs while the calling thread is inside the
 * agent's part of the sampling handler (sigpath_active(), sigpath.h).
 *
 * It sees the calls that go through the PLT: the agent's own, the program's,
 * and libc's internal malloc calls (glibc allows malloc to be replaced).  Not
 * seen: libc's internal locks (glibc calls its lock directly) and the private
 * libunwind's mutexes (its imports bind to libc first, RTLD_DEEPBIND), which
 * sigpath.h lists as taken on purpose, with every signal blocked.
 * The real functions are glibc's __libc_* and __pthread_mutex_lock aliases
 * (dlsym itself may call calloc); the last is a compat symbol in glibc 2.34
 * and later, so it is bound by version (x86-64, like the agent).
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sigpath.h"

#define SIGCHECK_API __attribute__((visibility("default")))

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);
extern int sigcheck_real_lock(pthread_mutex_t *m);
__asm__(".symver sigcheck_real_lock, __pthread_mutex_lock@GLIBC_2.2.5");

static void sigcheck(const char *what)
{
	static const char a[] = "cbottleneck sigpath check: ";
	static const char b[] = " called in the sampling handler\n";

	if (!sigpath_active())
		return;
	/* Raw writes: no stdio (it may lock or allocate). */
	syscall(SYS_write, 2, a, sizeof(a) - 1);
	syscall(SYS_write, 2, what, strlen(what));
	syscall(SYS_write, 2, b, sizeof(b) - 1);
	abort();
}

SIGCHECK_API void *malloc(size_t n)
{
	sigcheck("malloc");
	return __libc_malloc(n);
}

SIGCHECK_API void *calloc(size_t n, size_t size)
{
	sigcheck("calloc");
	return __libc_calloc(n, size);
}

SIGCHECK_API void *realloc(void *p, size_t n)
{
	sigcheck("realloc");
	return __libc_realloc(p, n);
}

SIGCHECK_API void free(void *p)
{
	sigcheck("free");
	__libc_free(p);
}

SIGCHECK_API int pthread_mutex_lock(pthread_mutex_t *m)
{
	sigcheck("pthread_mutex_lock");
	return sigcheck_real_lock(m);
}
