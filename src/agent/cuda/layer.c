/*
 * layer.c — lifecycle of libcbottleneck_cuda.so: InitializeInjection (called
 * by the CUDA driver inside cuInit when CUDA_INJECTION64_PATH names us), the
 * CUPTI setup order of docs/cuda-collection.md, taking and giving up the
 * subscription and the activity buffers (share.c decides when: the program's
 * own CUPTI client comes first), the atexit flush under a watchdog, the
 * fork-child switch-off, and the CUDA_STATUS records.
 *
 * Every CUPTI call of the layer's runs with the thread marked inside the agent
 * (layer_agent.enter), so the agent's guard (src/agent/cupti_guard.c) lets it
 * through as ours.
 *
 * On any CUPTI failure the layer writes CUDA_STATUS UNAVAILABLE (its message
 * says what to do), unsubscribes and returns: the program and CPU sampling run
 * on.  Nothing is ever printed on the program's stdout or stderr.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "convert.h"
#include "layer.h"
#include "../../format/cbn_time.h"

#define CBN_EXPORT __attribute__((visibility("default")))
#define LAYER_FLUSH_TIMEOUT_MS 4000

struct layer_agent layer_agent;
struct layer_state layer = { .lock = PTHREAD_MUTEX_INITIALIZER };

CUpti_SubscriberHandle layer_sub;
static char layer_old_sub[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN * 2]; /* who held CUPTI (39) */
static _Thread_local uint32_t layer_tid_cache;

static const CUpti_ActivityKind layer_kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, /* required */
	CUPTI_ACTIVITY_KIND_MEMCPY,            /* required */
	CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_MEMCPY2,
	CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
	CUPTI_ACTIVITY_KIND_OVERHEAD,
	CUPTI_ACTIVITY_KIND_MEMORY2,           /* cudaMalloc*, cudaFree*, pinned host */
	CUPTI_ACTIVITY_KIND_MEMORY_POOL,       /* pools behind cudaMallocAsync */
};
#define LAYER_REQUIRED_KINDS 2
#define LAYER_NKINDS (sizeof(layer_kinds) / sizeof(layer_kinds[0]))
static int layer_enabled[LAYER_NKINDS];

/* --- agent link, with fallbacks so a missing agent is harmless ------------ */

static uint64_t layer_mono_ns(void)
{
	return cbn_clock_ns(CLOCK_MONOTONIC);
}

static void layer_nop(void)
{
}

static int layer_zero(void)
{
	return 0;
}

static int layer_one(void)
{
	return 1;
}

static int layer_set_none(int on, int cause)
{
	(void)on;
	(void)cause;
	return 1;
}

static void layer_link_agent(void)
{
	layer_agent.write = (int (*)(const void *, size_t))dlsym(RTLD_DEFAULT, "cbn_agent_write");
	layer_agent.write_own =
		(int (*)(const void *, size_t))dlsym(RTLD_DEFAULT, "cbn_agent_write_own");
	if (!layer_agent.write_own)
		layer_agent.write_own = layer_agent.write;
	layer_agent.backtrace =
		(int (*)(uint64_t *, int, int))dlsym(RTLD_DEFAULT, "cbn_agent_backtrace");
	layer_agent.backtrace_cached = (const uint64_t *(*)(int *, uint64_t *))dlsym(
		RTLD_DEFAULT, "cbn_agent_backtrace_cached");
	layer_agent.now = (uint64_t(*)(void))dlsym(RTLD_DEFAULT, "cbn_agent_now");
	layer_agent.enter = (void (*)(void))dlsym(RTLD_DEFAULT, "cbn_agent_enter");
	layer_agent.leave = (void (*)(void))dlsym(RTLD_DEFAULT, "cbn_agent_leave");
	layer_agent.forked_child = (int (*)(void))dlsym(RTLD_DEFAULT, "cbn_agent_forked_child");
	if (!layer_agent.now)
		layer_agent.now = layer_mono_ns;
	if (!layer_agent.enter || !layer_agent.leave) {
		layer_agent.enter = layer_nop;
		layer_agent.leave = layer_nop;
	}
	if (!layer_agent.forked_child)
		layer_agent.forked_child = layer_zero;
	layer_agent.capture_active = (int (*)(void))dlsym(RTLD_DEFAULT, "cbn_agent_capture_active");
	layer_agent.capture_set = (int (*)(int, int))dlsym(RTLD_DEFAULT, "cbn_agent_capture_set");
	layer_agent.capture_listen =
		(void (*)(void (*)(int)))dlsym(RTLD_DEFAULT, "cbn_agent_capture_listen");
	layer_agent.capture_api = (int (*)(void))dlsym(RTLD_DEFAULT, "cbn_agent_capture_api");
	layer_agent.capture_poll = (int (*)(void))dlsym(RTLD_DEFAULT, "cbn_agent_capture_poll");
	layer_agent.cupti_attach = (int (*)(const struct cbn_cupti_layer *, char *, size_t))dlsym(
		RTLD_DEFAULT, "cbn_agent_cupti_attach");
	if (!layer_agent.capture_active || !layer_agent.capture_set || !layer_agent.capture_api) {
		/* An agent without capture control: everything is recorded. */
		layer_agent.capture_active = layer_one;
		layer_agent.capture_set = layer_set_none;
		layer_agent.capture_api = layer_zero;
		layer_agent.capture_listen = NULL;
		layer_agent.capture_poll = NULL;
	}
}

/*
 * The agent's capture listener (normal context, the thread that changed the
 * state, possibly inside one of our API callbacks: cudaProfilerStop).
 * Outside windows the activity kinds are disabled, so the GPU work there
 * costs CUPTI nothing and writes nothing; what completed inside a window is
 * flushed at its close.
 */
static void layer_capture_changed(int on)
{
	/* Not after the exit flush (the agent closes its window at exit, after
	 * our atexit handler ran), nor in a fork child. */
	if (atomic_load_explicit(&layer.off, memory_order_relaxed) ||
	    atomic_load(&layer.state) != CBN_CUDA_STARTED || getpid() != layer.pid)
		return;
	layer_agent.enter();
	pthread_mutex_lock(&layer.lock);
	layer.capture_on = on;
	/* While the program holds the activity buffers, the window's state
	 * waits for them to come back. */
	if (layer.act_on) {
		layer_set_kinds(on);
		if (!on)
			layer_flush_soft();
	}
	pthread_mutex_unlock(&layer.lock);
	layer_agent.leave();
}

uint32_t layer_tid(void)
{
	if (!layer_tid_cache)
		layer_tid_cache = (uint32_t)syscall(SYS_gettid);
	return layer_tid_cache;
}

void layer_write(const void *rec, size_t size)
{
	if (layer_agent.write && layer_agent.write(rec, size) != 0)
		atomic_fetch_add(&layer.emit_failed, 1);
}

void layer_write_own(const void *rec, size_t size)
{
	if (layer_agent.write_own && layer_agent.write_own(rec, size) != 0)
		atomic_fetch_add(&layer.emit_failed, 1);
}

void layer_status(uint32_t state, int32_t err, uint32_t timed_out, const char *msg)
{
	_Alignas(8) unsigned char buf[CONVERT_REC_MAX];

	size_t size;

	atomic_store(&layer.state, state);
	size = convert_status(buf, layer_agent.now(), state, err, layer.version, timed_out,
			      atomic_load(&layer.dropped), atomic_load(&layer.zero_ts),
			      atomic_load(&layer.buffers), atomic_load(&layer.records), msg);
	((struct cbn_rec_cuda_status *)buf)->driver_version = layer.driver;
	layer_write(buf, size);
}

/* cuDeviceGetAttribute from the driver the process already loaded; we never
 * load libcuda ourselves (and never link it). */
static void layer_find_device_attr(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);

	if (h)
		layer.device_attr =
			(int (*)(int *, int, int))dlsym(h, "cuDeviceGetAttribute");
}

/* --- failure ---------------------------------------------------------------- */

const char *layer_result_name(CUptiResult st)
{
	const char *s = NULL;

	if (cuptiGetResultString(st, &s) != CUPTI_SUCCESS || !s)
		s = "CUPTI error";
	return s;
}

/* One line, one status record, then back off completely so another tool (or
 * none) can use CUPTI. */
static void layer_unavailable(CUptiResult st, const char *why, const char *todo)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "%s (%s %d)", why, layer_result_name(st), (int)st);
	atomic_store(&layer.off, 1);
	if (layer.kinds_on)
		layer_set_kinds(0);
	if (layer_sub) {
		cuptiUnsubscribe(layer_sub);
		layer_sub = NULL;
	}
	/* What to do goes with it: the report prints the status message. */
	snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "; %s", todo);
	layer_status(CBN_CUDA_UNAVAILABLE, (int32_t)st, 0, msg);
}

void layer_fatal(const char *why)
{
	char msg[512];

	/* CUPTI finalizes itself after a fatal error: nothing more will come. */
	snprintf(msg, sizeof(msg), "CUPTI fatal error: %s", why);
	atomic_store(&layer.off, 1);
	layer_status(CBN_CUDA_UNAVAILABLE, 0, 0, msg);
}

/* --- flushing ---------------------------------------------------------------- */

void layer_flush_soft(void)
{
	/* Not while the program's client holds the buffers: its records are
	 * its own to flush, when it chooses. */
	if (atomic_load(&layer.state) == CBN_CUDA_STARTED && getpid() == layer.pid &&
	    atomic_load(&layer.act_mine))
		cuptiActivityFlushAll(0);
}

/* One forced flush handed to a helper thread: shared by the helper and the
 * waiter, freed by whichever lets go last (a hung helper never does: its
 * state is leaked, not freed under it). */
struct layer_flush {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int done;
	int refs;
};

static void layer_flush_put(struct layer_flush *f)
{
	int last;

	pthread_mutex_lock(&f->lock);
	last = --f->refs == 0;
	pthread_mutex_unlock(&f->lock);
	if (last) {
		pthread_mutex_destroy(&f->lock);
		pthread_cond_destroy(&f->cond);
		free(f);
	}
}

static void *layer_flush_thread(void *arg)
{
	struct layer_flush *f = arg;

	layer_agent.enter();
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	layer_agent.leave();
	pthread_mutex_lock(&f->lock);
	f->done = 1;
	pthread_cond_signal(&f->cond);
	pthread_mutex_unlock(&f->lock);
	layer_flush_put(f);
	return NULL;
}

/* FlushAll(FORCED) on a helper thread while this one waits at most the
 * timeout: a flush that never returns (HPCToolkit's FLUSH_ALARM workaround in
 * cupti-api.c) must not keep the program from exiting, nor a program's call
 * that made us step aside.  Returns 1 on timeout. */
int layer_flush_forced(long timeout_ms)
{
	struct layer_flush *f = calloc(1, sizeof(*f));
	struct timespec until;
	pthread_t th;
	int timed_out = 0;

	if (f) {
		pthread_mutex_init(&f->lock, NULL);
		pthread_cond_init(&f->cond, NULL);
		f->refs = 2;
	}
	if (!f || pthread_create(&th, NULL, layer_flush_thread, f) != 0) {
		if (f) {
			pthread_mutex_destroy(&f->lock);
			pthread_cond_destroy(&f->cond);
			free(f);
		}
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		return 0;
	}
	pthread_detach(th);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&f->lock);
	while (!f->done) {
		if (pthread_cond_timedwait(&f->cond, &f->lock, &until) == ETIMEDOUT) {
			timed_out = !f->done;
			break;
		}
	}
	pthread_mutex_unlock(&f->lock);
	layer_flush_put(f);
	return timed_out;
}

/* --- periodic flush --------------------------------------------------------------- */

#define LAYER_FLUSH_PERIOD_MS 1000

static pthread_mutex_t layer_flusher_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t layer_flusher_cond = PTHREAD_COND_INITIALIZER;
static int layer_flusher_stop;

/* A setting of the run: the agent keeps them (its variables are out of the
 * program's environment by the time the driver loads us: env.c); without
 * the agent, the environment. */
const char *layer_getenv(const char *name)
{
	static const char *(*fn)(const char *);

	if (!fn)
		*(void **)&fn = dlsym(RTLD_DEFAULT, "cbn_agent_getenv");
	return fn ? fn(name) : getenv(name);
}

long layer_env_ms(const char *name, long dflt)
{
	const char *s = layer_getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return dflt;
	v = strtol(s, &end, 10);
	return (*end || v < 0) ? dflt : v;
}

/* FlushAll(0) every period ("default flush can be done at a regular interval
 * in a separate thread", cupti_activity.h): finished work reaches the session
 * file while the program runs, so an exit that skips atexit (_exit, a fatal
 * signal, SIGKILL) loses at most the last period.  With capture controls it
 * also looks at the gates every LAYER_CAPTURE_POLL_MS: a window the launcher
 * opened or closed (--delay, ctl, the toggle signal) turns the activity
 * kinds on or off here. */
#define LAYER_CAPTURE_POLL_MS 5
static void *layer_flusher(void *arg)
{
	long period_ms = (long)(intptr_t)arg, wait_ms, poll_ms = 0, waited = 0;
	struct timespec until;

	pthread_setname_np(pthread_self(), "cbn-cupti-flush");
	/* With the periodic flush off (period 0) the thread still takes the
	 * activity buffers back once the program's client lets go of them. */
	wait_ms = period_ms > 0 ? period_ms : LAYER_FLUSH_PERIOD_MS;
	if (layer_agent.capture_poll && layer_agent.capture_listen && layer_agent.capture_poll())
		poll_ms = LAYER_CAPTURE_POLL_MS;
	pthread_mutex_lock(&layer_flusher_lock);
	while (!layer_flusher_stop) {
		long step = poll_ms && poll_ms < wait_ms - waited ? poll_ms : wait_ms - waited;
		int timed_out;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += step / 1000;
		until.tv_nsec += (step % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		timed_out = pthread_cond_timedwait(&layer_flusher_cond, &layer_flusher_lock,
						   &until) == ETIMEDOUT;
		if (layer_flusher_stop)
			break;
		pthread_mutex_unlock(&layer_flusher_lock);
		if (poll_ms && !layer_agent.capture_poll())
			poll_ms = 0;
		waited += step;
		if (timed_out && waited < wait_ms) {
			pthread_mutex_lock(&layer_flusher_lock);
			continue;
		}
		waited = 0;
		if (atomic_load(&layer.state) == CBN_CUDA_STARTED && !atomic_load(&layer.off)) {
			share_tick();
			if (timed_out && period_ms > 0 && atomic_load(&layer.act_mine)) {
				layer_agent.enter();
				cuptiActivityFlushAll(0);
				layer_agent.leave();
			}
		}
		pthread_mutex_lock(&layer_flusher_lock);
	}
	pthread_mutex_unlock(&layer_flusher_lock);
	return NULL;
}

/* Wake the flusher now (share.c: the program let go of the buffers). */
void layer_wake_flusher(void)
{
	pthread_mutex_lock(&layer_flusher_lock);
	pthread_cond_broadcast(&layer_flusher_cond);
	pthread_mutex_unlock(&layer_flusher_lock);
}

static void layer_start_flusher(void)
{
	long period_ms = layer_env_ms("CBN_CUDA_FLUSH_PERIOD_MS", LAYER_FLUSH_PERIOD_MS);
	pthread_t th;

	if (period_ms <= 0 && !layer_agent.cupti_attach)
		return;
	if (pthread_create(&th, NULL, layer_flusher, (void *)(intptr_t)period_ms) == 0)
		pthread_detach(th);
}

/* Not joined: it may be inside a flush, which the forced one waits for anyway. */
static void layer_stop_flusher(void)
{
	pthread_mutex_lock(&layer_flusher_lock);
	layer_flusher_stop = 1;
	pthread_cond_broadcast(&layer_flusher_cond);
	pthread_mutex_unlock(&layer_flusher_lock);
}

/* Registered inside cuInit, so it runs before cudart's own exit teardown
 * (LIFO; argonne-lcf/THAPI#276).  No cuptiFinalize here: it races other
 * threads still inside CUPTI (kineto#686). */
static void layer_atexit(void)
{
	char msg[256] = "";
	long timeout_ms;
	int timed_out = 0;

	if (atomic_load(&layer.state) != CBN_CUDA_STARTED || getpid() != layer.pid)
		return;
	layer_stop_flusher();
	layer_agent.enter();
	pthread_mutex_lock(&layer.lock);
	timeout_ms = layer_env_ms("CBN_CUDA_FLUSH_TIMEOUT_MS", LAYER_FLUSH_TIMEOUT_MS);
	if (timeout_ms <= 0)
		timeout_ms = LAYER_FLUSH_TIMEOUT_MS;
	/* The program's client flushes its own records, at its own exit. */
	if (atomic_load(&layer.act_mine))
		timed_out = layer_flush_forced(timeout_ms);
	if (timed_out) {
		snprintf(msg, sizeof(msg),
			 "CUPTI flush did not return in %g s; some GPU records may be lost",
			 timeout_ms / 1000.0);
	} else {
		activity_count_dropped();
	}
	if (atomic_load(&layer.emit_failed))
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
			 "%s%llu CUDA records did not fit in the session file", *msg ? "; " : "",
			 (unsigned long long)atomic_load(&layer.emit_failed));
	atomic_store(&layer.off, 1);
	layer_status(CBN_CUDA_FINISHED, 0, (uint32_t)timed_out, msg);
	pthread_mutex_unlock(&layer.lock);
	selftime_dump();
	layer_agent.leave();
}

/* fork without exec: the child has none of CUPTI's threads and may not use
 * CUDA (the parent initialized it).  Turn everything off and never call CUPTI
 * here; the agent's own child handler (registered earlier, so run first) has
 * already given this process its own session file. */
static void layer_atfork_child(void)
{
	layer_tid_cache = 0;
	if (atomic_load(&layer.state) == 0)
		return;
	atomic_store(&layer.off, 1);
	layer_status(CBN_CUDA_FORK_CHILD, 0, 0,
		     "forked child without exec: CUDA tracing is off in this process");
}

/* --- setup ------------------------------------------------------------------ */

const char *layer_todo(CUptiResult st, const char *old)
{
	static char buf[256];

	switch ((int)st) {
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
		snprintf(buf, sizeof(buf), "run without %s (or set CBN_CUDA=0) to trace CUDA",
			 old && *old ? old : "the other CUDA profiler");
		return buf;
	case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
		return "allow GPU profiling for non-admin users (NVreg_RestrictProfilingToAdminUsers=0) "
		       "or run as root";
	case CUPTI_ERROR_UNKNOWN:
	case CUPTI_ERROR_NOT_INITIALIZED:
		return "check that the NVIDIA driver works (nvidia-smi)";
	default:
		return "check that libcupti.so.13 matches the CUDA driver";
	}
}

/* Our subscription and callbacks (at start, and when the program's client
 * gave up its own).  0, or the CUptiResult with why filled in. */
int layer_subscribe(char *why, size_t len)
{
	CUpti_SubscriberParams params;
	char old[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN * 2] = "";
	CUptiResult st;

	memset(&params, 0, sizeof(params));
	params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
	params.subscriberName = "cbottleneck";
	params.oldSubscriberName = old;
	params.oldSubscriberSize = sizeof(old);
	st = cuptiSubscribe_v2(&layer_sub, api_callback, NULL, &params);
	if (st != CUPTI_SUCCESS) {
		layer_sub = NULL;
		old[sizeof(old) - 1] = '\0';
		snprintf(layer_old_sub, sizeof(layer_old_sub), "%s", old);
		if (st == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
			snprintf(why, len, "CUPTI is already in use by %s",
				 *old ? old : "another tool");
		else
			snprintf(why, len, "cannot subscribe to CUPTI");
		return (int)st;
	}
	st = cuptiEnableCallback(1, layer_sub, CUPTI_CB_DOMAIN_STATE, CUPTI_CBID_STATE_FATAL_ERROR);
	if (st == CUPTI_SUCCESS)
		st = api_setup(layer_sub);
	if (st != CUPTI_SUCCESS) {
		snprintf(why, len, "cannot enable CUPTI callbacks");
		cuptiUnsubscribe(layer_sub);
		layer_sub = NULL;
		return (int)st;
	}
	return 0;
}

/* Enable (on) or disable our activity kinds, those CUPTI accepted at start. */
void layer_set_kinds(int on)
{
	size_t k;

	for (k = 0; k < LAYER_NKINDS; k++) {
		if (!layer_enabled[k])
			continue;
		if (on)
			cuptiActivityEnable(layer_kinds[k]);
		else
			cuptiActivityDisable(layer_kinds[k]);
	}
	layer.kinds_on = on;
}

/* Our buffer callbacks, and our kinds when the capture window is open (at
 * start: which kinds CUPTI accepts, noted in note).  0, or the CUptiResult
 * with why filled in. */
int layer_activity_take(char *note, size_t nlen, char *why, size_t wlen)
{
	CUptiResult st;
	size_t k;

	st = cuptiActivityRegisterCallbacks(activity_request, activity_complete);
	if (st != CUPTI_SUCCESS) {
		snprintf(why, wlen, "cannot register CUPTI activity buffers");
		return (int)st;
	}
	layer.act_on = 1;
	atomic_store(&layer.act_mine, 1);
	if (!layer.kinds_known) {
		for (k = 0; k < LAYER_NKINDS; k++) {
			st = cuptiActivityEnable(layer_kinds[k]);
			if (st == CUPTI_SUCCESS) {
				layer_enabled[k] = 1;
				continue;
			}
			if (k < LAYER_REQUIRED_KINDS) {
				snprintf(why, wlen, "cannot enable CUPTI activity kind %d",
					 (int)layer_kinds[k]);
				return (int)st;
			}
			snprintf(note + strlen(note), nlen - strlen(note), "%sactivity kind %d off",
				 *note ? "; " : "", (int)layer_kinds[k]);
		}
		layer.kinds_known = 1;
		layer.kinds_on = 1;
		if (!layer.capture_on)
			layer_set_kinds(0);
	} else if (layer.capture_on) {
		layer_set_kinds(1);
	}
	if (!layer.dumped) {
		/* Device and context records exist only for contexts created
		 * after the enable unless dumped now (llvm-project#85770).  If
		 * the dump is refused this early inside cuInit, a plain enable
		 * still yields the records CUPTI writes at driver initialization
		 * and context creation. */
		if (cuptiActivityEnableAndDump(CUPTI_ACTIVITY_KIND_DEVICE) != CUPTI_SUCCESS)
			cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE);
		if (cuptiActivityEnableAndDump(CUPTI_ACTIVITY_KIND_CONTEXT) != CUPTI_SUCCESS)
			cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONTEXT);
		layer.dumped = 1;
	} else {
		cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE);
		cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONTEXT);
	}
	return 0;
}

/* Our records flushed in, our kinds off: the buffers are free for the
 * program's client (share.c registers its callbacks again). */
void layer_activity_give(void)
{
	if (layer.act_on && !layer_flush_forced(layer_env_ms("CBN_CUDA_FLUSH_TIMEOUT_MS",
							     LAYER_FLUSH_TIMEOUT_MS)))
		activity_count_dropped();
	if (layer.kinds_on)
		layer_set_kinds(0);
	cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DEVICE);
	cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONTEXT);
	layer.act_on = 0;
	atomic_store(&layer.act_mine, 0);
}

static int layer_start(void)
{
	char note[256] = "", why[320];
	int held, st;

	/* The driver that loaded us (for the report's environment line). */
	{
		int (*drv)(int *) = (int (*)(int *))dlsym(RTLD_DEFAULT, "cuDriverGetVersion");
		int v = 0;

		if (drv && drv(&v) == 0 && v > 0)
			layer.driver = (uint32_t)v;
	}
	st = cuptiGetVersion(&layer.version);
	if (st != CUPTI_SUCCESS) {
		layer_unavailable(st, "cuptiGetVersion failed", layer_todo(st, NULL));
		return -1;
	}
	/* From 13.0 the version reads xxyyzz; the structs we read are 13.0's.  A
	 * newer 13.x writes longer records with the same prefix: fine. */
	if (layer.version / 10000 != 13)
		snprintf(note, sizeof(note),
			 "loaded libcupti reports API version %u, built for 13.x (%u); CUDA records "
			 "may be incomplete", layer.version, (unsigned)CUPTI_API_VERSION);
	layer.capture_on = 1;

	/* What the program's own client holds already (it started before
	 * cuInit) stays its own: share.c takes it over when it lets go. */
	share_attach();
	pthread_mutex_lock(&layer.lock);
	held = share_held();
	if (!(held & CBN_CUPTI_API)) {
		st = layer_subscribe(why, sizeof(why));
		if (st) {
			pthread_mutex_unlock(&layer.lock);
			layer_unavailable((CUptiResult)st, why, layer_todo(st, layer_old_sub));
			return -1;
		}
	}
	api_scan_modules();

	/* Before any activity is enabled, and never changed afterwards.  No
	 * timestamp callback: CUPTI takes one per process, and a program that
	 * profiles itself registers its own (Kineto does, at profiler start;
	 * registering twice corrupts timestamps, pytorch#192021).  CUPTI's
	 * default clock is CLOCK_REALTIME: share_clock() maps it to ours. */
	cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);

	if (!(held & CBN_CUPTI_ACTIVITY)) {
		st = layer_activity_take(note, sizeof(note), why, sizeof(why));
		if (st) {
			pthread_mutex_unlock(&layer.lock);
			layer_unavailable((CUptiResult)st, why, layer_todo(st, NULL));
			return -1;
		}
	}
	layer_find_device_attr();

	atexit(layer_atexit);
	layer_status(CBN_CUDA_STARTED, 0, 0, note);
	share_started();
	pthread_mutex_unlock(&layer.lock);
	/* Listen first, then look: a window that closes in between is seen.
	 * (After STARTED: the listener acts only on a started layer.) */
	if (layer_agent.capture_listen) {
		layer_agent.capture_listen(layer_capture_changed);
		if (!layer_agent.capture_active())
			layer_capture_changed(0);
	}
	layer_start_flusher();
	return 0;
}

/* The driver's tool hook (CUDA_INJECTION64_PATH): called inside cuInit, in
 * processes that use CUDA, before any CUDA work.  Always returns 1 so the
 * driver goes on; whatever happens here, the program runs. */
CBN_EXPORT int InitializeInjection(void)
{
	static atomic_int once;
	const char *s;

	if (atomic_exchange(&once, 1))
		return 1;
	layer_link_agent();
	layer.pid = getpid();
	/* Without the agent there is nowhere to record to: stay out of the way. */
	if (!layer_agent.write)
		return 1;
	s = layer_getenv("CBN_CUDA");
	if (s && strcmp(s, "0") == 0)
		return 1;
	s = layer_getenv("CBN_CUDA_DUMP_DIR");
	layer.dump_dir = s && *s ? s : NULL;
	selftime_setup();
	pthread_atfork(NULL, NULL, layer_atfork_child);
	if (layer_agent.forked_child()) {
		atomic_store(&layer.off, 1);
		layer_status(CBN_CUDA_FORK_CHILD, 0, 0,
			     "forked child without exec: CUDA tracing is off in this process");
		return 1;
	}
	layer_agent.enter();
	layer_start();
	layer_agent.leave();
	return 1;
}
