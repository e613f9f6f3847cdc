/*
 * floor.h — the agent's floor (floor.c): what every other file calls, calling
 * nothing above it: the state (agent.h), events into the session file, the
 * clock, the thread id, notes and disabling, the real libc function behind
 * an interposer, checked reads of our own memory, raw system calls, and the
 * hooks through which the files below the lifecycle ask it for something.
 */
#ifndef CBN_AGENT_FLOOR_H
#define CBN_AGENT_FLOOR_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "agent.h"

/*
 * A system call made directly, as glibc's syscall() makes it (x86-64:
 * up to six arguments, each passed as a long; -1 with errno set on failure),
 * never through the syscall() the agent exports to the program (sandbox.c),
 * which would be a call up into a feature and a check on every call.
 * SIGNAL-SAFE.  agent_syscall6 returns the kernel's value (-errno on
 * failure) and leaves errno alone.
 */
#if !defined(__x86_64__)
#error "agent_syscall: x86-64 only"
#endif
static inline long agent_syscall6(long nr, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

static inline long agent_syscall_ret(long ret)
{
	if ((unsigned long)ret > -4096UL) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

#define agent_syscall(...) AGENT_SYSCALL_(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0)
#define AGENT_SYSCALL_(nr, a, b, c, d, e, f, ...)                                             \
	agent_syscall_ret(agent_syscall6((long)(nr), (long)(a), (long)(b), (long)(c), (long)(d), \
					 (long)(e), (long)(f)))

/* 1 when the calling thread is under a seccomp mode or filter of
 * the program's (sandbox.c marks it): the agent then makes no system call on
 * it.  SIGNAL-SAFE (a thread flag and an atomic). */
static inline int agent_sandboxed(void)
{
	return agent_tls.sandboxed || atomic_load_explicit(&agent.sandbox_all, memory_order_relaxed);
}

/* The program's other threads (agent.program_others): +1 before one is
 * created, -1 when it could not be or when it ends.  agent_program_alone:
 * no other thread of the program's exists, so none could open a file now.
 * SIGNAL-SAFE (an atomic). */
static inline void agent_program_add(int n)
{
	atomic_fetch_add(&agent.program_others, n);
}

static inline int agent_program_alone(void)
{
	return atomic_load_explicit(&agent.program_others, memory_order_acquire) <= 0;
}

/* The agent's own text, set by the first module scan (modules.c)
 * before any sampler is armed; agent_is_self: pc lies in it (0 before).
 * SIGNAL-SAFE. */
void agent_self_set(uint64_t lo, uint64_t hi) AGENT_HIDDEN;
int agent_is_self(uint64_t pc) AGENT_HIDDEN;

/* Normal context unless said: the clock (CLOCK_MONOTONIC ns, the session's
 * one), the next definition of an interposed libc function,
 * a record into the session file, disabling (said once, in the header or
 * the notes), a header note flag, the calling thread's id. */
uint64_t agent_now(void) AGENT_HIDDEN;
void *agent_real(const char *name) AGENT_HIDDEN;
/* n bytes at src, or -1 when any is unmapped (never a fault).  Signal-safe. */
int agent_vmread(void *dst, uintptr_t src, size_t n) AGENT_HIDDEN;
/* Pieces read in one system call: remote[i] into local[i] (the same
 * lengths), in order, up to the first piece not all mapped.  Returns the
 * bytes read, -1 when none.  Signal-safe; at most AGENT_VMREAD_PIECES
 * pieces.  agent_pid_init, at start-up, lets each read skip a getpid. */
#define AGENT_VMREAD_PIECES 1024 /* UIO_MAXIOV */
struct iovec;
long agent_vmreadv(const struct iovec *local, const struct iovec *remote, int n) AGENT_HIDDEN;
void agent_pid_init(void) AGENT_HIDDEN;
int agent_event(const void *rec, size_t size) AGENT_HIDDEN;
void agent_disable(const char *why) AGENT_HIDDEN;
/* One line into the session's notes file (never the program's stderr);
 * normal context only. */
void agent_say(const char *fmt, ...) AGENT_HIDDEN __attribute__((format(printf, 1, 2)));
void agent_note(uint32_t flag) AGENT_HIDDEN;
uint32_t agent_gettid(void) AGENT_HIDDEN;
/* What the files below the lifecycle ask of it, through the hook
 * agent.c registers at start-up (nothing before, nor in an inert agent).
 * agent_mem_last_point: the memory timeline's last point, now (before an
 * exec). */
void agent_hooks_set(void (*mem_now)(void)) AGENT_HIDDEN;
void agent_mem_last_point(void) AGENT_HIDDEN;
/* Each line of /proc/self/maps (without its newline) to fn, read with plain
 * system calls and a buffer on the stack, until fn returns nonzero (then
 * that value) or the end (0); -1 when the file cannot be opened.  A line
 * longer than the buffer is skipped.  errno is kept.  Normal context. */
int agent_maps_each(int (*fn)(char *line, void *arg), void *arg) AGENT_HIDDEN;

#endif
