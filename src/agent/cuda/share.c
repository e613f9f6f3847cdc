/*
 * share.c — CUPTI shared with the program's own CUDA profiler (torch.profiler's
 * Kineto, a tool linked into the program).  CUPTI 13.0 takes one subscriber
 * and one set of activity-buffer callbacks per process.  The agent's guard
 * (src/agent/cupti_guard.c) sees the program's subscription and activity calls
 * before they reach CUPTI and calls the hooks here, which step aside:
 *
 *   the program subscribes       -> our subscription goes (API records and
 *                                   launch stacks stop), back when it
 *                                   unsubscribes or finalizes;
 *   it registers buffers or      -> our records are flushed in, our kinds
 *   enables an activity kind        disabled, its callbacks registered again;
 *                                   back once every kind it enabled is
 *                                   disabled and LAYER_RESUME_MS have passed
 *                                   (its own flush first), from the flusher.
 *
 * Each change is a CUDA_STATUS record (YIELDED / RESUMED, h.flags CBN_CUPTI_*,
 * the program's client named), so the report says who held CUDA tracing when.
 * The program's client gets what it gets without us: its calls go through
 * unchanged, and no timestamp callback of ours competes with its own.
 *
 * Locking: the guard calls the hooks with its own lock held, then they take
 * layer.lock (guard lock first, always).  share_tick takes layer.lock only,
 * and never holds it across the flush that hands the program its records.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "convert.h"
#include "layer.h"
#include "../../format/cbn_time.h"

#define LAYER_RESUME_MS 1000   /* quiet time after the program let go of activity */

static struct {
	int yielded;                   /* CBN_CUPTI_* the program holds (layer.lock) */
	int program_subscribed;        /* it holds a subscription still */
	uint64_t resume_at;            /* 0, or when the flusher takes activity back */
	unsigned resume_gen;           /* bumped by each take-back attempt */
	int need_init;                 /* cuptiFinalize went through */
	char holder[96];
	/* The program's timestamp callback (CUPTI's clock from then on), and a
	 * first reading of it against CLOCK_MONOTONIC for the mapping. */
	uint64_t (*_Atomic clock)(void);
	_Atomic uint64_t clk_src0, clk_dst0;
	_Atomic int64_t rt_offset;     /* CLOCK_REALTIME - ours, as last adopted */
} sh;

static uint64_t share_mono(void)
{
	return cbn_clock_ns(CLOCK_MONOTONIC);
}

static int share_live(void)
{
	return atomic_load(&layer.state) == CBN_CUDA_STARTED && !atomic_load(&layer.off) &&
	       getpid() == layer.pid;
}

/* A YIELDED or RESUMED status: what (CBN_CUPTI_*) in h.flags. */
static void share_status(uint32_t state, int what, const char *msg)
{
	_Alignas(8) unsigned char buf[CONVERT_REC_MAX];
	size_t size;

	size = convert_status(buf, layer_agent.now(), state, 0, layer.version, 0,
			      atomic_load(&layer.dropped), atomic_load(&layer.zero_ts),
			      atomic_load(&layer.buffers), atomic_load(&layer.records), msg);
	((struct cbn_rec_cuda_status *)buf)->h.flags = (uint16_t)what;
	((struct cbn_rec_cuda_status *)buf)->driver_version = layer.driver;
	layer_write(buf, size);
}

static void share_yield(int what, const char *holder, void *req, void *done)
{
	int newly;

	pthread_mutex_lock(&layer.lock);
	if (holder && *holder && !sh.yielded)
		snprintf(sh.holder, sizeof(sh.holder), "%s", holder);
	newly = what & ~sh.yielded;
	sh.yielded |= what;
	if (!share_live()) {
		pthread_mutex_unlock(&layer.lock);
		return;
	}
	if (what & CBN_CUPTI_ACTIVITY) {
		sh.resume_at = 0; /* a take-back still waiting is off */
		if (layer.act_on)
			layer_activity_give();
		/* The program registered before and enables again now: its
		 * callbacks, not ours, must receive what it enables. */
		if (req && done)
			cuptiActivityRegisterCallbacks((CUpti_BuffersCallbackRequestFunc)req,
						       (CUpti_BuffersCallbackCompleteFunc)done);
	}
	if ((what & CBN_CUPTI_API) && layer_sub) {
		cuptiUnsubscribe(layer_sub);
		layer_sub = NULL;
	}
	if (newly)
		share_status(CBN_CUDA_YIELDED, newly, sh.holder);
	pthread_mutex_unlock(&layer.lock);
}

static void share_resume(int what, int program_subscribed)
{
	int wake = 0;

	pthread_mutex_lock(&layer.lock);
	sh.program_subscribed = program_subscribed;
	if (!share_live()) {
		sh.yielded &= ~what;
		pthread_mutex_unlock(&layer.lock);
		return;
	}
	if ((what & CBN_CUPTI_API) && (sh.yielded & CBN_CUPTI_API) && !program_subscribed) {
		char why[320] = "";
		int st = layer_subscribe(why, sizeof(why));

		sh.yielded &= ~CBN_CUPTI_API;
		share_status(CBN_CUDA_RESUMED, CBN_CUPTI_API, st ? why : "");
	}
	if ((what & CBN_CUPTI_ACTIVITY) && (sh.yielded & CBN_CUPTI_ACTIVITY)) {
		sh.resume_at = share_mono() +
			       (uint64_t)layer_env_ms("CBN_CUDA_RESUME_MS", LAYER_RESUME_MS) * 1000000u;
		wake = 1;
	}
	pthread_mutex_unlock(&layer.lock);
	if (wake)
		layer_wake_flusher();
}

/* cuptiFinalize: CUPTI forgot our subscription and buffers too (both were
 * given up just before); the next take sets it up from scratch. */
static void share_finalized(void)
{
	pthread_mutex_lock(&layer.lock);
	sh.need_init = 1;
	layer_sub = NULL;
	layer.act_on = 0;
	layer.kinds_on = 0;
	atomic_store(&layer.act_mine, 0);
	pthread_mutex_unlock(&layer.lock);
}

/* The program registered a timestamp callback: CUPTI's records use its clock
 * from now on.  No lock (the guard may call this inside share_attach). */
static void share_clockset(void *f)
{
	uint64_t (*fn)(void) = (uint64_t(*)(void))f;

	if (!fn)
		return;
	atomic_store(&sh.clk_src0, fn());
	atomic_store(&sh.clk_dst0, share_mono());
	atomic_store(&sh.clock, fn);
}

static const struct cbn_cupti_layer share_hooks = {
	.yield = share_yield,
	.resume = share_resume,
	.finalized = share_finalized,
	.clock = share_clockset,
};

int share_attach(void)
{
	char holder[96] = "";
	int held;

	if (!layer_agent.cupti_attach)
		return 0;
	held = layer_agent.cupti_attach(&share_hooks, holder, sizeof(holder));
	pthread_mutex_lock(&layer.lock);
	if (held && !sh.yielded)
		snprintf(sh.holder, sizeof(sh.holder), "%s", holder);
	sh.yielded |= held;
	pthread_mutex_unlock(&layer.lock);
	return held;
}

int share_held(void)
{
	return sh.yielded;
}

void share_started(void)
{
	if (sh.yielded)
		share_status(CBN_CUDA_YIELDED, sh.yielded, sh.holder);
}

void share_tick(void)
{
	char note[256] = "", why[320] = "";
	const char *msg;
	unsigned gen;
	int st;

	pthread_mutex_lock(&layer.lock);
	if (!sh.resume_at || share_mono() < sh.resume_at || !share_live()) {
		pthread_mutex_unlock(&layer.lock);
		return;
	}
	gen = ++sh.resume_gen;
	pthread_mutex_unlock(&layer.lock);

	/* What the program's client enabled and has not flushed yet goes to its
	 * callbacks, still registered: no lock held, since they may take the
	 * program's own locks. */
	layer_agent.enter();
	layer_flush_forced(layer_env_ms("CBN_CUDA_FLUSH_TIMEOUT_MS", 4000));
	pthread_mutex_lock(&layer.lock);
	if (sh.resume_at && sh.resume_gen == gen && (sh.yielded & CBN_CUPTI_ACTIVITY) &&
	    share_live()) {
		if (sh.need_init) {
			cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
			sh.need_init = 0;
		}
		st = layer_activity_take(note, sizeof(note), why, sizeof(why));
		sh.yielded &= ~CBN_CUPTI_ACTIVITY;
		sh.resume_at = 0;
		if (st)
			msg = why;
		else if (sh.yielded & CBN_CUPTI_API)
			msg = "activity records only: the program's client keeps its CUPTI "
			      "subscription, so CUDA API calls and launch stacks stay unrecorded";
		else
			msg = note;
		share_status(CBN_CUDA_RESUMED, CBN_CUPTI_ACTIVITY, msg);
	}
	pthread_mutex_unlock(&layer.lock);
	layer_agent.leave();
}

void share_clock(struct convert_ctx *c)
{
	uint64_t (*fn)(void) = atomic_load(&sh.clock);
	uint64_t m0, m1, src, dst, src0, dst0;
	struct timespec r;

	if (!fn) {
		int64_t off, cur;

		/* CUPTI's default clock, CLOCK_REALTIME, against ours: slewing
		 * moves both alike, so the offset holds until the wall clock is
		 * stepped.  The first reading stays (every buffer maps alike, to
		 * the nanosecond) until a reading differs by over 1 ms: a step. */
		m0 = share_mono();
		clock_gettime(CLOCK_REALTIME, &r);
		m1 = share_mono();
		off = (int64_t)((uint64_t)r.tv_sec * 1000000000u + (uint64_t)r.tv_nsec -
				(m0 + (m1 - m0) / 2));
		cur = atomic_load(&sh.rt_offset);
		if (!cur || off - cur > 1000000 || cur - off > 1000000) {
			atomic_store(&sh.rt_offset, off);
			cur = off;
		}
		c->ts_offset = cur;
		c->ts_scale = 0;
		return;
	}
	/* The program's clock may tick in other units (Kineto's counts TSC
	 * cycles): a line through its first reading and one taken now. */
	src = fn();
	dst = share_mono();
	src0 = atomic_load(&sh.clk_src0);
	dst0 = atomic_load(&sh.clk_dst0);
	c->ts_src = src;
	c->ts_dst = dst;
	c->ts_scale = src > src0 && dst > dst0 ? (double)(dst - dst0) / (double)(src - src0) : 1.0;
}
