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
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent.h"
#include "../format/cbn_time.h"

struct agent agent;

/*
 * glibc (2.36) resets dl_load_lock in a fork child but not dl_load_write_lock,
 * which dl_iterate_phdr takes: a child forked while another thread was in
 * dlopen/dlclose/dl_iterate_phdr inherits it locked by a thread that does not
 * exist there, and every dl_iterate_phdr (our module scans, libunwind's cache
 * misses) would hang the child.  In a child of a multi-threaded parent this
 * flag stays 0 (PC-only samples, no scans) until the helper thread's
 * dl_iterate_phdr has returned once.
 */
static _Atomic int loader_ok = 1;
int agent_loader_ok(void)
{
	return atomic_load_explicit(&loader_ok, memory_order_acquire);
}

/* The loader's lock is known free (1) or may be held by a thread lost in a
 * fork (0): the fork child clears it, the background thread's probe sets it. */
void agent_loader_set(int ok)
{
	atomic_store_explicit(&loader_ok, ok, memory_order_release);
}

/*
 * What the files below the lifecycle ask of it, registered by agent.c at
 * start-up (agent_hooks_set) so that they call down, here, and never up
 * into background.c, whose thread calls their scans back.  NULL (an inert
 * agent, or before start-up): nothing to do.
 */
static void (*_Atomic hook_background)(void);
static void (*_Atomic hook_mem_now)(void);

void agent_hooks_set(void (*background)(void), void (*mem_now)(void))
{
	atomic_store(&hook_background, background);
	atomic_store(&hook_mem_now, mem_now);
}

void agent_want_background(void)
{
	void (*fn)(void) = atomic_load(&hook_background);

	if (fn)
		fn();
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
	return (uint32_t)syscall(SYS_gettid);
}

/* The next definition after ours: the libc function we interpose. */
void *agent_real(const char *name)
{
	return dlsym(RTLD_NEXT, name);
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
	const char *dir = getenv(CBN_ENV_SESSION);
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
