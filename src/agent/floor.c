/*
 * floor.c — the agent's floor, what every other file of the agent calls and
 * that calls nothing of theirs: its state (struct agent), events into the
 * session file, the clock, the thread id, the libc function we interpose,
 * notes and disabling, and whether the loader may be asked about modules.
 * The lifecycle above it (agent.c: start-up, fork, exit; background.c: the
 * background thread) sets it up; nothing here starts or stops anything: what
 * the files below ask of the lifecycle goes through the hooks it registers.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "env.h"
#include "floor.h"
#include "../format/cbn_time.h"

struct agent agent;
__thread struct agent_thread agent_tls AGENT_TLS;

/*
 * What the files below the lifecycle ask of it, registered by agent.c at
 * start-up (agent_hooks_set) so that they call down, here, and never up
 * into memline.c.  NULL (an inert agent, or before start-up): nothing to do.
 */
static void (*_Atomic hook_mem_now)(void);

void agent_hooks_set(void (*mem_now)(void))
{
	atomic_store(&hook_mem_now, mem_now);
}

void agent_mem_last_point(void)
{
	void (*fn)(void) = atomic_load(&hook_mem_now);

	if (fn)
		fn();
}

uint64_t agent_now(void)
{
	return cbn_clock_ns(CLOCK_MONOTONIC);
}

uint32_t agent_gettid(void)
{
	return (uint32_t)agent_syscall(SYS_gettid);
}

/* Our own text: to find the signal frame when the interrupted pc is missing
 * (sampler.c), and to tell the agent's own mappings from the program's.
 * Relaxed atomics: a later scan on another thread may set it again (to the
 * same range) while handlers read it. */
static _Atomic uint64_t self_lo, self_hi;

void agent_self_set(uint64_t lo, uint64_t hi)
{
	atomic_store_explicit(&self_lo, lo, memory_order_relaxed);
	atomic_store_explicit(&self_hi, hi, memory_order_relaxed);
}

/* SIGNAL-SAFE. */
int agent_is_self(uint64_t pc)
{
	return pc >= atomic_load_explicit(&self_lo, memory_order_relaxed) &&
	       pc < atomic_load_explicit(&self_hi, memory_order_relaxed);
}

/* The next definition after ours: the libc function we interpose. */
/* The next definition of name after the agent's.  The agent interposes
 * dlsym (modules.c), so the real one is found once by version; called
 * directly, it sees the agent as its caller (RTLD_NEXT). */
void *agent_real(const char *name)
{
	static void *(*_Atomic real_dlsym)(void *, const char *);
	void *(*fn)(void *, const char *) = atomic_load(&real_dlsym);

	if (!fn) {
		fn = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
		if (!fn)
			fn = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym",
								     "GLIBC_2.2.5");
		if (!fn)
			return NULL;
		atomic_store(&real_dlsym, fn);
	}
	return fn(RTLD_NEXT, name);
}

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif

/*
 * This process's pid without a system call: a word in a page marked
 * MADV_WIPEONFORK, which reads 0 in a child made without CLONE_VM (fork,
 * or a raw clone that runs no atfork handler), where the first read of the
 * child fetches its own.  A child made with CLONE_VM shares the word, and
 * the memory a read of that pid reads.  Where the kernel lacks the advice
 * (before 4.14), getpid() at each call.  glibc keeps no pid cache: each
 * agent_vmread paid a second system call for it (1-1.5 us in a VM).
 */
static _Atomic(_Atomic uint32_t *) self_pid_word;

void agent_pid_init(void)
{
	long p;

	if (atomic_load(&self_pid_word))
		return;
	p = agent_syscall6(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
	if ((unsigned long)p > -4096UL)
		return;
	if (agent_syscall6(SYS_madvise, p, 4096, MADV_WIPEONFORK, 0, 0, 0) != 0) {
		agent_syscall6(SYS_munmap, p, 4096, 0, 0, 0, 0);
		return;
	}
	atomic_store((_Atomic uint32_t *)p, (uint32_t)agent_syscall(SYS_getpid));
	atomic_store(&self_pid_word, (_Atomic uint32_t *)p);
}

/* SIGNAL-SAFE.  This process's pid (errno kept). */
static long agent_self_pid(void)
{
	_Atomic uint32_t *w = atomic_load_explicit(&self_pid_word, memory_order_relaxed);
	uint32_t pid;
	int e;

	if (w && (pid = atomic_load_explicit(w, memory_order_relaxed)) != 0)
		return pid;
	e = errno;
	pid = (uint32_t)agent_syscall(SYS_getpid);
	errno = e;
	if (w)
		atomic_store_explicit(w, pid, memory_order_relaxed);
	return pid;
}

/*
 * SIGNAL-SAFE (one system call, errno kept).  n bytes at src into dst, or -1
 * when any of them is not mapped: process_vm_readv on our own pid fails
 * instead of faulting.  Where it is refused (seccomp, an old kernel): each
 * page probed (rt_sigprocmask with an invalid how copies its argument in
 * first and fails with EFAULT on an unmapped page, changing nothing), then
 * read.
 */
static _Atomic int vmread_refused;

int agent_vmread(void *dst, uintptr_t src, size_t n)
{
	struct iovec local = {dst, n}, remote = {(void *)src, n};

	return !n || agent_vmreadv(&local, &remote, 1) == (long)n ? 0 : -1;
}

/* The pages of [src, src + n) are mapped (the refused path's probe). */
static int vm_probe(uintptr_t src, size_t n)
{
	uintptr_t p;

	for (p = src & ~(uintptr_t)4095; p < src + n; p += 4096)
		if (agent_syscall(SYS_rt_sigprocmask, ~0, (void *)p, NULL, 8) < 0 && errno == EFAULT)
			return -1;
	return 0;
}

long agent_vmreadv(const struct iovec *local, const struct iovec *remote, int n)
{
	long r;
	int e = errno, i;

	if (n < 1 || n > AGENT_VMREAD_PIECES)
		return -1;
	if (!atomic_load_explicit(&vmread_refused, memory_order_relaxed)) {
		r = agent_syscall(SYS_process_vm_readv, agent_self_pid(), local, (unsigned long)n,
				  remote, (unsigned long)n, 0UL);
		if (r >= 0 || (errno != ENOSYS && errno != EPERM)) {
			errno = e;
			return r < 0 ? -1 : r;
		}
		atomic_store_explicit(&vmread_refused, 1, memory_order_relaxed);
	}
	/* as process_vm_readv: the pieces in order, up to the first that fails */
	for (r = 0, i = 0; i < n; i++) {
		if (vm_probe((uintptr_t)remote[i].iov_base, local[i].iov_len) < 0)
			break;
		memcpy(local[i].iov_base, remote[i].iov_base, local[i].iov_len);
		r += (long)local[i].iov_len;
	}
	errno = e;
	return r ? r : -1;
}

int agent_event(const void *rec, size_t size)
{
	if (!agent.w.hdr)
		return -1;
	return writer_append_event(&agent.w, rec, size);
}

/*
 * One line into <session>/notes (CBN_NOTES_FILE), never on the program's
 * stdout or stderr: the launcher shows it in the report's Data quality
 * section (and on its own stderr with -v).  Normal context only: the
 * constructor, the fork child, the control socket's start.  The descriptor
 * is open for three system calls.
 */
void agent_say(const char *fmt, ...)
{
	/* The launcher's directory (a rank's file may live below it). */
	const char *dir = agent_getenv(CBN_ENV_SESSION);
	char path[PATH_MAX], line[512];
	va_list ap;
	int n, fd, len;

	if (!dir || !*dir)
		dir = agent.session;
	if (!*dir)
		return;
	n = snprintf(line, sizeof(line), "pid %d\t", (int)getpid());
	va_start(ap, fmt);
	len = n + vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (len > (int)sizeof(line) - 2)
		len = (int)sizeof(line) - 2;
	line[len++] = '\n';
	if (snprintf(path, sizeof(path), "%s/%s", dir, CBN_NOTES_FILE) >= (int)sizeof(path))
		return;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	(void)!write(fd, line, (size_t)len);
	close(fd);
}

/* Record in the header something the program did that the report mentions. */
void agent_note(uint32_t flag)
{
	if (agent.w.hdr)
		atomic_fetch_or(&agent.w.hdr->notes, flag);
}

/* Stop sampling and say why, once: in the header, or in the session's notes
 * when this process has no file.  The target runs on untouched. */
void agent_disable(const char *why)
{
	struct cbn_file_header *h = agent.w.hdr;

	if (!atomic_exchange(&agent.active, 0) && !h) {
		agent_say("not profiled: %s", why);
		return;
	}
	if (h && !atomic_load(&h->disabled)) {
		snprintf(h->disabled_reason, sizeof(h->disabled_reason), "%s", why);
		h->disabled_reason_len = (uint32_t)strlen(h->disabled_reason);
		atomic_store(&h->disabled, 1);
	}
	if (!h)
		agent_say("not profiled: %s", why);
}

int agent_maps_each(int (*fn)(char *line, void *arg), void *arg)
{
	char buf[8192];
	size_t have = 0;
	int e = errno, ret = 0, fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		errno = e;
		return -1;
	}
	while (!ret) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		char *line = buf, *nl;

		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		while (!ret && (nl = strchr(line, '\n')) != NULL) {
			*nl = '\0';
			ret = fn(line, arg);
			line = nl + 1;
		}
		have = (size_t)(buf + have - line);
		memmove(buf, line, have);
		if (have >= sizeof(buf) - 1)
			have = 0; /* a line longer than the buffer: skip it */
	}
	close(fd);
	errno = e;
	return ret;
}
