/*
 * threads_create.c — follows the target's threads as they come and go: the
 * pthread_create interposer that wraps each start routine (arm before user
 * code), the cleanup handler that ends a thread however it leaves, and the
 * names a thread is given (pthread_setname_np, prctl PR_SET_NAME; prctl's
 * PR_SET_SECCOMP goes to sandbox.c).  A feature over the sampler, the
 * module map and the registry (threads.c).  Nothing here runs in signal
 * context.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "alloc.h"
#include "floor.h"
#include "modules.h"
#include "nvtx.h"
#include "pathcache.h"
#include "ranges.h"
#include "sampler.h"
#include "sandbox.h"
#include "sigwrap.h"
#include "stacks.h"
#include "threads.h"
#include "threads_create.h"
#include "timer.h"

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static pthread_create_fn real_pthread_create;

struct thread_start {
	void *(*fn)(void *);
	void *arg;
	uint64_t app_blocked;            /* creator's view of our signals: inherited */
	size_t stack_size;               /* from its attributes (stacks_user_bounds) */
	char name[CBN_NAME_MAX];         /* creator's name: the kernel gives it to the thread */
	int filtered;                    /* the creator is under a seccomp filter (sandbox.c) */
};
_Static_assert(sizeof(struct thread_start) <= 64, "a handoff block (alloc.c)");

/* The agent's own CPU on the program's threads, at their start and end
 * (header.overhead.site_ns[CBN_OVH_OTHER]): it is in their CPU clocks (the
 * Measured column), and the report keeps it apart. */
static void threads_overhead(uint64_t cpu0)
{
	struct cbn_file_header *h = agent.w.hdr;
	uint64_t cpu = agent_thread_cpu();

	if (h && cpu > cpu0) {
		atomic_fetch_add_explicit(&h->overhead.site_ns[CBN_OVH_OTHER], cpu - cpu0,
					  memory_order_relaxed);
		atomic_fetch_add_explicit(&h->overhead.site_calls[CBN_OVH_OTHER], 1,
					  memory_order_relaxed);
	}
}

/* Runs at the end of every thread we armed: return, pthread_exit, cancel
 * (a cleanup handler, not a thread-specific key: the program keeps all
 * PTHREAD_KEYS_MAX keys). */
static void threads_cleanup(void *v)
{
	uint64_t cpu0 = agent_thread_cpu();

	(void)v;
	sandbox_mem_thread_end();
	if (sampler_thread_end()) {
		ranges_thread_end();
		nvtx_thread_end();
	}
	pathcache_thread_end();
	threads_overhead(cpu0);
}

int threads_init(void)
{
	if (!real_pthread_create)
		real_pthread_create = (pthread_create_fn)agent_real("pthread_create");
	return real_pthread_create ? 0 : -1;
}

static void *threads_trampoline(void *p)
{
	struct thread_start s = *(struct thread_start *)p;
	uint64_t cpu0 = agent_thread_cpu();
	void *ret;

	agent_handoff_free(p);
	/* Created by a thread under a seccomp filter of the program's: it has
	 * the filter too, and the agent's system calls are not ours to risk. */
	if (s.filtered) {
		sandbox_thread_inherit();
		return s.fn(s.arg);
	}
	sigwrap_set_app_blocked(s.app_blocked);
	stacks_user_bounds((uintptr_t)__builtin_frame_address(0), s.stack_size);
	sampler_thread_begin(1, s.name);
	agent_tls.start_fn = (uint64_t)(uintptr_t)s.fn;
	threads_overhead(cpu0);
	pthread_cleanup_push(threads_cleanup, NULL);
	ret = s.fn(s.arg);
	pthread_cleanup_pop(1);
	return ret;
}

int threads_real_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	return real_pthread_create(th, attr, fn, arg);
}

__attribute__((visibility("default"))) int pthread_create(pthread_t *th, const pthread_attr_t *attr,
							  void *(*fn)(void *), void *arg)
{
	struct thread_start *s;
	int ret;

	if (!real_pthread_create && threads_init() < 0)
		return EAGAIN;
	if (!atomic_load(&agent.active))
		return real_pthread_create(th, attr, fn, arg);
	/* A scan point: what a dlopen just loaded, before the new thread runs
	 * its code (modules.c). */
	if (!agent_sandboxed())
		modules_refresh();
	s = agent_handoff_alloc(sizeof(*s));
	if (!s)
		return real_pthread_create(th, attr, fn, arg);
	s->filtered = agent_sandboxed();
	s->fn = fn;
	s->arg = arg;
	s->app_blocked = sigwrap_app_blocked();
	s->stack_size = 0;
	if (attr) {
		pthread_attr_getstacksize(attr, &s->stack_size);
	} else {
		pthread_attr_t def;

		if (pthread_getattr_default_np(&def) == 0) {
			pthread_attr_getstacksize(&def, &s->stack_size);
			pthread_attr_destroy(&def);
		}
	}
	if (agent_tls.name[0])
		memcpy(s->name, agent_tls.name, CBN_NAME_MAX);
	else
		agent_syscall(SYS_prctl, PR_GET_NAME, s->name, 0, 0, 0);
	/* Counted from before it exists (it unregisters at its end). */
	agent_program_add(1);
	ret = real_pthread_create(th, attr, threads_trampoline, s);
	if (ret) {
		agent_program_add(-1);
		agent_handoff_free(s);
	}
	return ret;
}

static void threads_name_event(uint32_t tid, const char *name)
{
	struct cbn_rec_thread r;

	if (!tid || !atomic_load(&agent.active))
		return;
	memset(&r, 0, sizeof(r));
	r.h.type = CBN_REC_THREAD_NAME;
	r.h.size = sizeof(r);
	r.ts = agent_now();
	r.tid = tid;
	snprintf(r.name, sizeof(r.name), "%s", name);
	agent_event(&r, sizeof(r));
}

__attribute__((visibility("default"))) int pthread_setname_np(pthread_t th, const char *name)
{
	static int (*real)(pthread_t, const char *);
	int ret;

	if (!real)
		real = (int (*)(pthread_t, const char *))agent_real("pthread_setname_np");
	if (!real)
		return ENOSYS;
	ret = real(th, name);
	if (ret == 0 && pthread_equal(th, pthread_self()))
		snprintf(agent_tls.name, sizeof(agent_tls.name), "%s", name);
	if (ret == 0)
		threads_name_event(pthread_equal(th, pthread_self()) ? agent_gettid() : threads_lookup(th),
				   name);
	return ret;
}

/* prctl(PR_SET_NAME): the other way a thread names itself. */
__attribute__((visibility("default"))) int prctl(int option, ...)
{
	static int (*real)(int, ...);
	unsigned long a[4];
	va_list ap;
	int ret, i;

	va_start(ap, option);
	for (i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (!real)
		*(void **)&real = agent_real("prctl");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (option == PR_SET_SECCOMP)
		return sandbox_prctl(real, a);
	ret = real(option, a[0], a[1], a[2], a[3]);
	if (ret == 0 && option == PR_SET_NAME && a[0]) {
		char name[CBN_NAME_MAX];
		int e = errno;

		strncpy(name, (const char *)a[0], sizeof(name) - 1);
		name[sizeof(name) - 1] = 0;
		memcpy(agent_tls.name, name, sizeof(name));
		threads_name_event(agent_tls.tid ? agent_tls.tid : agent_gettid(), name);
		errno = e;
	}
	return ret;
}

/* Our own definition's address, whatever the symbol resolves to globally:
 * agent_init compares the two to tell whether we are really preloaded. */
extern __typeof(pthread_create) threads_self_create
	__attribute__((alias("pthread_create"), visibility("hidden"), nothrow));
