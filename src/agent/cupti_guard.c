/*
 * cupti_guard.c — CUPTI shared with the program's own CUDA profiler.  CUPTI
 * (13.0, and any version on drivers before r610) takes one subscriber and one
 * set of activity-buffer callbacks per process; a program that profiles itself
 * (torch.profiler's Kineto, a tool linked into it) would get nothing while
 * libcbottleneck_cuda.so holds them.  So the agent, first in the global scope
 * (LD_PRELOAD), interposes libcupti's subscription and activity entry points:
 * a call of the program's passes through unchanged after the CUDA layer has
 * stepped aside (flushed its records, disabled its kinds, unsubscribed), and
 * once the program lets go (unsubscribes, disables its last activity kind,
 * finalizes) the layer takes over again.  What the program holds, and since
 * when, is tracked here; the stepping aside is the layer's (cbn_cupti_layer).
 *
 * Calls made while the calling thread is inside the agent (the layer brackets
 * its own CUPTI calls with cbn_agent_enter/leave) pass straight through.
 * A client that dlopens libcupti and calls it through dlsym'd pointers (not
 * through the global scope) is not seen: docs/cuda-collection.md.
 *
 * Normal context only; the guard's mutex is never held by a signal handler.
 * No CUPTI header: the types below are ABI-equal (handles are pointers,
 * enums and CUptiResult are int, CUPTIAPI is empty on Linux).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "floor.h"
#include "agent_api.h"

#define CBN_EXPORT __attribute__((visibility("default")))
#define GUARD_KINDS 128            /* > CUPTI_ACTIVITY_KIND_COUNT of 13.x */
#define CUPTI_SUCCESS_ 0
#define CUPTI_ERROR_UNKNOWN_ 999

typedef void *cupti_handle;
typedef void (*cupti_cb)(void *, int, uint32_t, const void *);
typedef void (*cupti_req)(uint8_t **, size_t *, size_t *);
typedef void (*cupti_done)(void *, uint32_t, uint8_t *, size_t, size_t);

/* CUpti_SubscriberParams' leading fields (13.0): for the holder's name. */
struct guard_sub_params {
	size_t struct_size;
	const char *subscriber_name;
};

static struct {
	pthread_mutex_t lock;
	const struct cbn_cupti_layer *layer;
	int subs;                  /* the program's live subscriptions */
	cupti_req req;             /* the program's buffer callbacks, last registered */
	cupti_done done;
	int registered;            /* registered since its kinds were last all disabled */
	uint16_t kinds[GUARD_KINDS]; /* enables minus disables, per activity kind */
	int enabled;               /* sum of kinds[] */
	int held;                  /* CBN_CUPTI_* the program holds now */
	void *clock;               /* its timestamp callback, once registered */
	char holder[96];
} guard = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Set while this thread runs the guard's bookkeeping or the layer's hooks:
 * CUPTI calls made meanwhile (the layer's own, a callback of the program's run
 * by our flush) pass through. */
static _Thread_local int guard_busy;

/* The definition the caller would have bound to without us: the next one in
 * the global scope, else (libcupti loaded RTLD_LOCAL below a dlopened
 * library) the one in the calling module's own scope. */
static void *guard_real(const char *name, void *caller)
{
	Dl_info me, info;
	void *f = dlsym(RTLD_NEXT, name), *h;

	if (f)
		return f;
	if (!caller || !dladdr(caller, &info) || !info.dli_fname)
		return NULL;
	h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return NULL;
	f = dlsym(h, name);
	dlclose(h);
	/* The calling module's scope was the global one (the executable's),
	 * where the first definition is ours: there is no other. */
	if (f && dladdr(f, &info) && dladdr((void *)guard_real, &me) &&
	    info.dli_fbase == me.dli_fbase)
		return NULL;
	return f;
}

/* In each interposer: real_, the definition it stands in front of. */
#define REAL(fn)                                                                     \
	static __typeof__(fn) *real_;                                                \
	if (!real_)                                                                  \
		real_ = (__typeof__(fn) *)guard_real(#fn, __builtin_return_address(0)); \
	if (!real_)                                                                  \
		return CUPTI_ERROR_UNKNOWN_

static int guard_passthrough(void)
{
	return guard_busy || agent_tls.in_agent > 0;
}

/* The program's caller for the report: a subscriber's own name, else the
 * module that made the call ("libtorch_cpu.so"). */
static void guard_name(const char *given, void *caller)
{
	Dl_info info;
	const char *base;

	if (guard.held)
		return;
	if (given && *given) {
		snprintf(guard.holder, sizeof(guard.holder), "%s", given);
		return;
	}
	if (caller && dladdr(caller, &info) && info.dli_fname && *info.dli_fname) {
		base = strrchr(info.dli_fname, '/');
		base = base ? base + 1 : info.dli_fname;
		/* PyTorch's Kineto lives in libtorch_cpu.so (or libkineto.so). */
		snprintf(guard.holder, sizeof(guard.holder), "%s%s", base,
			 !strncmp(base, "libtorch", 8) || !strncmp(base, "libkineto", 9)
				 ? ": Kineto, torch.profiler"
				 : "");
		return;
	}
	snprintf(guard.holder, sizeof(guard.holder), "%s", "the program");
}

static int guard_holds(void)
{
	return (guard.subs > 0 ? CBN_CUPTI_API : 0) |
	       (guard.enabled > 0 || guard.registered ? CBN_CUPTI_ACTIVITY : 0);
}

/* Before the program's call: the layer steps aside from what it will hold. */
static void guard_take(int what)
{
	int add = what & ~guard.held;

	if (!add)
		return;
	guard.held |= add;
	if (guard.layer)
		guard.layer->yield(add, guard.holder, (void *)guard.req, (void *)guard.done);
}

/* After the program's call: the layer takes back what it let go of. */
static void guard_settle(void)
{
	int now = guard_holds(), freed = guard.held & ~now;

	if (!freed)
		return;
	guard.held = now;
	if (guard.layer)
		guard.layer->resume(freed, guard.subs > 0);
}

static void guard_enter(void)
{
	pthread_mutex_lock(&guard.lock);
	guard_busy++;
}

static void guard_leave(void)
{
	guard_busy--;
	pthread_mutex_unlock(&guard.lock);
}

CBN_EXPORT int cuptiSubscribe(cupti_handle *sub, cupti_cb cb, void *data)
{
	void *caller = __builtin_return_address(0);
	int st;
	REAL(cuptiSubscribe);

	if (guard_passthrough())
		return real_(sub, cb, data);
	guard_enter();
	guard_name(NULL, caller);
	guard_take(CBN_CUPTI_API);
	st = real_(sub, cb, data);
	if (st == CUPTI_SUCCESS_)
		guard.subs++;
	guard_settle();  /* refused (another tool holds it): take it back */
	guard_leave();
	return st;
}

CBN_EXPORT int cuptiSubscribe_v2(cupti_handle *sub, cupti_cb cb, void *data, void *params)
{
	void *caller = __builtin_return_address(0);
	const struct guard_sub_params *sp = params;
	int st;
	REAL(cuptiSubscribe_v2);

	if (guard_passthrough())
		return real_(sub, cb, data, params);
	guard_enter();
	guard_name(sp && sp->struct_size >= sizeof(*sp) ? sp->subscriber_name : NULL, caller);
	guard_take(CBN_CUPTI_API);
	st = real_(sub, cb, data, params);
	if (st == CUPTI_SUCCESS_)
		guard.subs++;
	guard_settle();
	guard_leave();
	return st;
}

CBN_EXPORT int cuptiUnsubscribe(cupti_handle sub)
{
	int st;
	REAL(cuptiUnsubscribe);

	if (guard_passthrough())
		return real_(sub);
	guard_enter();
	st = real_(sub);
	if (st == CUPTI_SUCCESS_ && guard.subs > 0)
		guard.subs--;
	guard_settle();
	guard_leave();
	return st;
}

CBN_EXPORT int cuptiActivityRegisterCallbacks(cupti_req req, cupti_done done)
{
	void *caller = __builtin_return_address(0);
	int st;
	REAL(cuptiActivityRegisterCallbacks);

	if (guard_passthrough())
		return real_(req, done);
	guard_enter();
	guard_name(NULL, caller);
	guard_take(CBN_CUPTI_ACTIVITY);
	st = real_(req, done);
	if (st == CUPTI_SUCCESS_) {
		guard.req = req;
		guard.done = done;
		guard.registered = 1;
	}
	guard_settle();
	guard_leave();
	return st;
}

/* Enable/disable of a kind, for a context or all; ctx unused but forwarded. */
static int guard_kind(int kind, int enable, int st)
{
	if (st != CUPTI_SUCCESS_ || kind < 0 || kind >= GUARD_KINDS)
		return st;
	if (enable) {
		if (guard.kinds[kind] < UINT16_MAX) {
			guard.kinds[kind]++;
			guard.enabled++;
		}
	} else if (guard.kinds[kind] > 0) {
		/* One disable undoes every enable of the kind (CUPTI keeps no
		 * count either). */
		guard.enabled -= guard.kinds[kind];
		guard.kinds[kind] = 0;
		if (guard.enabled == 0)
			guard.registered = 0;
	}
	return st;
}

CBN_EXPORT int cuptiActivityEnable(int kind)
{
	void *caller = __builtin_return_address(0);
	int st;
	REAL(cuptiActivityEnable);

	if (guard_passthrough())
		return real_(kind);
	guard_enter();
	guard_name(NULL, caller);
	guard_take(CBN_CUPTI_ACTIVITY);
	st = guard_kind(kind, 1, real_(kind));
	guard_settle();
	guard_leave();
	return st;
}

CBN_EXPORT int cuptiActivityEnableContext(void *ctx, int kind)
{
	void *caller = __builtin_return_address(0);
	int st;
	REAL(cuptiActivityEnableContext);

	if (guard_passthrough())
		return real_(ctx, kind);
	guard_enter();
	guard_name(NULL, caller);
	guard_take(CBN_CUPTI_ACTIVITY);
	st = guard_kind(kind, 1, real_(ctx, kind));
	guard_settle();
	guard_leave();
	return st;
}

CBN_EXPORT int cuptiActivityDisable(int kind)
{
	int st;
	REAL(cuptiActivityDisable);

	if (guard_passthrough())
		return real_(kind);
	guard_enter();
	st = guard_kind(kind, 0, real_(kind));
	guard_settle();
	guard_leave();
	return st;
}

CBN_EXPORT int cuptiActivityDisableContext(void *ctx, int kind)
{
	int st;
	REAL(cuptiActivityDisableContext);

	if (guard_passthrough())
		return real_(ctx, kind);
	guard_enter();
	st = guard_kind(kind, 0, real_(ctx, kind));
	guard_settle();
	guard_leave();
	return st;
}

/* cuptiFinalize detaches CUPTI from the process: every subscription,
 * registration and enabled kind is gone, ours too.  The layer flushes and
 * steps aside first, then starts over. */
CBN_EXPORT int cuptiFinalize(void)
{
	void *caller = __builtin_return_address(0);
	int st;
	REAL(cuptiFinalize);

	if (guard_passthrough())
		return real_();
	guard_enter();
	guard_name(NULL, caller);
	guard_take(CBN_CUPTI_API | CBN_CUPTI_ACTIVITY);
	st = real_();
	if (st == CUPTI_SUCCESS_) {
		guard.subs = 0;
		guard.registered = 0;
		guard.enabled = 0;
		memset(guard.kinds, 0, sizeof(guard.kinds));
		guard.req = NULL;
		guard.done = NULL;
		if (guard.layer)
			guard.layer->finalized();
	}
	guard_settle();
	guard_leave();
	return st;
}

/* Passed through; the layer maps CUPTI's clock (now the program's) to ours. */
CBN_EXPORT int cuptiActivityRegisterTimestampCallback(uint64_t (*fn)(void))
{
	int st;
	REAL(cuptiActivityRegisterTimestampCallback);

	if (guard_passthrough())
		return real_(fn);
	guard_enter();
	/* CUPTI takes a timestamp callback only while no activity kind is
	 * enabled: ours step aside (a client registers its clock right before
	 * it enables its kinds), and come back if none follows. */
	guard_name(NULL, __builtin_return_address(0));
	guard_take(CBN_CUPTI_ACTIVITY);
	st = real_(fn);
	if (st == CUPTI_SUCCESS_ && fn) {
		guard.clock = (void *)fn;
		if (guard.layer)
			guard.layer->clock(guard.clock);
	}
	guard_settle();
	guard_leave();
	return st;
}

/* agent_api.h */
CBN_EXPORT int cbn_agent_cupti_attach(const struct cbn_cupti_layer *layer, char *holder,
				      size_t len)
{
	int held;

	guard_enter();
	guard.layer = layer;
	held = guard.held;
	if (guard.clock)
		layer->clock(guard.clock);
	if (holder && len)
		snprintf(holder, len, "%s", held ? guard.holder : "");
	guard_leave();
	return held;
}
