/*
 * kernel.c — kernel stacks for each thread sampled with a perf event: whether
 * to take them (CBN_KERNEL_STACKS), opening the thread's kernel-only event at
 * its first sample, draining its ring into every sample (kstacks.c), parking
 * it while the thread stays in user mode, and the header's account: taken on
 * how many threads, kernel samples kept and lost, or why there are none.
 *
 * Parking: the kernel-only cpu-clock event runs an hrtimer that fires every
 * period while the thread runs, in user mode too, where it records nothing;
 * on a virtual machine, where a timer interrupt is dear, that alone cost a
 * CPU-bound thread 6 to 10 % at 1 kHz (docs/performance.md).  So a thread
 * whose event saw kernel mode for under 1/CBN_KSTACK_PARK_SHARE of a
 * CBN_KSTACK_PARK_NS window of its CPU time closes it, and its samples
 * split their CPU between user and kernel by rusage
 * (timer_weigh) until the system time grows, when it opens again.  What is
 * lost: the kernel stacks of the stretch between the first system time and
 * the next sample (one [kernel] row on the stack it returned to).
 *
 * SIGNAL-SAFE: kernel_thread_sample and what it calls (sigpath.h); the rest
 * runs in normal context.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "aside.h"
#include "env.h"
#include "floor.h"
#include "kernel.h"
#include "kstacks.h"

/* 0: CBN_KERNEL_STACKS=0 (read by the constructor, before any sampler; the
 * header says so at the first sample of each image, fork children too). */
static int kernel_want = 1;
/* 0: CBN_KERNEL_STACKS=always, never park a thread's event. */
static int kernel_park = 1;
/* A refusal that holds for every thread of the process (errno). */
static _Atomic int kernel_refused;

/*
 * The kernel event's period: the sampling period times 1.618.  Both events
 * run hrtimers on the thread's CPU clock, and one opened at a fixed delay
 * after the sampler's (as the handler does) fired each time at the same
 * instant of the sampler's own signal delivery, kernel mode: a thread
 * spinning in user code read 60 % kernel (a kernel sample at every sample
 * once the event had been reopened).  At this ratio its firing
 * instants walk through every phase of the sampler's period (the golden
 * ratio's multiples are the most evenly spread), so kernel mode is sampled
 * in proportion to its time, the signal's own few microseconds included.
 */
static uint64_t kernel_period(void)
{
	return agent.period_ns + agent.period_ns * 618u / 1000u;
}

/* SIGNAL-SAFE.  n kernel samples since the last sample, as periods of the
 * sampler: their time with the remainder of the last ones (so the split is
 * right on average), at most weight (the excess waits for the next). */
static uint32_t kernel_periods(struct agent_thread *t, uint32_t n, uint32_t weight)
{
	uint64_t ns, k, cap = 4 * agent.period_ns;

	if (!n)
		return 0; /* the remainder waits for the next kernel samples */
	ns = (uint64_t)n * kernel_period() + t->kcarry;
	k = ns / agent.period_ns;
	if (k > weight)
		k = weight;
	ns -= k * agent.period_ns;
	t->kcarry = ns < cap ? ns : cap;
	return (uint32_t)k;
}

/* SIGNAL-SAFE.  No kernel stacks in this image: say why, once (the first
 * thread to fail claims the header's reason; a thread that has them wins). */
static void kernel_off(const char *why, int err)
{
	struct cbn_file_header *h = agent.w.hdr;
	uint32_t unknown = CBN_KSTACK_UNKNOWN;
	size_t i;

	if (!h || !atomic_compare_exchange_strong(&h->kstack_state, &unknown, CBN_KSTACK_OFF))
		return;
	h->kstack_errno = err;
	for (i = 0; why[i] && i < sizeof(h->kstack_reason) - 1; i++)
		h->kstack_reason[i] = why[i];
	h->kstack_reason_len = (uint32_t)i;
}

void kernel_config(void)
{
	const char *q = agent_getenv(CBN_ENV_KSTACKS);

	kernel_want = !(q && strcmp(q, "0") == 0);
	kernel_park = !(q && strcmp(q, "always") == 0);
}

static const char *kernel_why(int err)
{
	switch (err) {
	case -EACCES:
		return "kernel callchains refused: perf_event_paranoid > 1 without CAP_PERFMON";
	case -EPERM:
		return "kernel callchains refused (seccomp or missing CAP_PERFMON)";
	case -ENOSYS:
	case -ENOENT:
	case -EOPNOTSUPP:
		return "perf events unavailable in this kernel";
	case -EMFILE:
	case -ENFILE:
		return "no descriptor free for the kernel event";
	case -ENOMEM:
		return "no memory for the kernel event's ring (perf_event_mlock_kb)";
	default:
		return "kernel event setup failed";
	}
}

/* SIGNAL-SAFE.  kstacks_open for thread t, aside (aside.c): the event's
 * descriptor never exists in the program's table while another thread of
 * the program could open a file. */
struct kernel_open_req {
	struct kstacks_ring *ring;
	uint64_t period;
	uint32_t tid;
};

static int kernel_open_aside(void *p)
{
	struct kernel_open_req *q = p;

	return kstacks_open(q->ring, q->period, q->tid);
}

static int kernel_open(struct agent_thread *t)
{
	struct kernel_open_req q = {&t->kring, kernel_period(), t->tid};

	return aside_run(kernel_open_aside, &q);
}

/* SIGNAL-SAFE.  At a thread's first sample: open its kernel event when its
 * sampler is a perf event (a POSIX timer means perf events were refused,
 * and the kernel event would be too). */
static void kernel_thread_arm(struct agent_thread *t)
{
	struct cbn_file_header *h = agent.w.hdr;
	int ret, refused;

	t->ktried = 1;
	if (!h)
		return;
	if (!kernel_want) {
		kernel_off("CBN_KERNEL_STACKS=0", 0);
		return;
	}
	if (t->backend != AGENT_BACKEND_PERF) {
		refused = agent.perf_refused;
		if (!agent.want_perf)
			kernel_off("CBN_PERF_EVENTS=0", 0);
		else if (refused)
			kernel_off(kernel_why(-refused), refused);
		return;
	}
	if (atomic_load_explicit(&kernel_refused, memory_order_relaxed))
		return;
	ret = kernel_open(t);
	if (ret) {
		if (ret == -EACCES || ret == -EPERM || ret == -ENOSYS || ret == -ENOENT ||
		    ret == -EOPNOTSUPP)
			atomic_store_explicit(&kernel_refused, -ret, memory_order_relaxed);
		kernel_off(kernel_why(ret), -ret);
		return;
	}
	atomic_store(&h->kstack_state, CBN_KSTACK_TAKEN);
	atomic_fetch_add_explicit(&h->threads_kstacks, 1, memory_order_relaxed);
}

/* SIGNAL-SAFE.  Close the thread's event until its system time grows (its
 * ring was just drained). */
static void kernel_thread_park(struct agent_thread *t)
{
	struct cbn_file_header *h = agent.w.hdr;

	kstacks_close(&t->kring);
	t->kparked = 1;
	if (h)
		atomic_fetch_add_explicit(&h->kstack_parks, 1, memory_order_relaxed);
}

void kernel_thread_unpark(struct agent_thread *t)
{
	struct cbn_file_header *h = agent.w.hdr;

	t->kparked = 0;
	t->kwin = t->kwin_k = 0;
	t->kcarry = 0;
	/* A failure here (descriptors or locked memory run out) leaves the
	 * thread without kernel stacks from now on, as at its first sample:
	 * not tried again at every sample. */
	if (atomic_load_explicit(&kernel_refused, memory_order_relaxed) ||
	    kernel_open(t) != 0)
		return;
	if (h)
		atomic_fetch_add_explicit(&h->kstack_unparks, 1, memory_order_relaxed);
}

size_t kernel_thread_sample(struct agent_thread *t, struct kstacks_placer *pl,
			    struct cbn_kstacks *out, size_t cap, uint32_t weight,
			    uint32_t *ksamples)
{
	struct cbn_file_header *h = agent.w.hdr;
	uint32_t kept = 0, lost = 0;
	size_t used;

	*ksamples = UINT32_MAX;
	if (!t->ktried) {
		kernel_thread_arm(t); /* its ring saw nothing of this sample yet */
		return 0;
	}
	if (!t->kring.base)
		return 0;
	used = kstacks_drain(&t->kring, pl, out, cap, &kept, &lost);
	*ksamples = kernel_periods(t, kept + lost, weight);
	if (h) {
		atomic_fetch_add_explicit(&h->kstack_samples, kept, memory_order_relaxed);
		atomic_fetch_add_explicit(&h->kstack_lost, lost, memory_order_relaxed);
		/* placed or not: of the kept, whether the ring had entry states */
		if (pl && t->kring.regs) {
			atomic_fetch_add_explicit(&h->kstack_placed, pl->placed,
						  memory_order_relaxed);
			atomic_fetch_add_explicit(&h->kstack_unplaced, pl->unplaced,
						  memory_order_relaxed);
		} else {
			atomic_fetch_add_explicit(&h->kstack_unplaced, kept, memory_order_relaxed);
		}
	}
	/* a window of CBN_KSTACK_PARK_NS of the thread's CPU with kernel mode
	 * under 1/CBN_KSTACK_PARK_SHARE of it: park */
	t->kwin += weight;
	t->kwin_k += *ksamples;
	if (t->kwin * agent.period_ns >= CBN_KSTACK_PARK_NS) {
		if (kernel_park && t->kwin_k * CBN_KSTACK_PARK_SHARE < t->kwin)
			kernel_thread_park(t);
		t->kwin = t->kwin_k = 0;
	}
	return used;
}

void kernel_thread_begin(struct agent_thread *t)
{
	/* A fork child's copy names the parent's ring, which it does not have
	 * (VM_DONTCOPY): forget it, never unmap it. */
	t->kring.base = NULL;
	t->kring.len = 0;
	t->ktried = 0;
	t->kparked = 0;
	t->kwin = t->kwin_k = 0;
	t->kcarry = 0;
}

void kernel_thread_end(struct agent_thread *t)
{
	struct cbn_file_header *h = agent.w.hdr;
	uint32_t kept = 0, lost = 0;

	if (!t->kring.base)
		goto out;
	/* Kernel time after the thread's last sample is in no sample's weight:
	 * its stacks are counted, as lost. */
	kstacks_drain(&t->kring, NULL, NULL, 0, &kept, &lost);
	if (h)
		atomic_fetch_add_explicit(&h->kstack_lost, lost + kept, memory_order_relaxed);
	kstacks_close(&t->kring);
out:
	t->ktried = 0;
	t->kparked = 0;
	t->kwin = t->kwin_k = 0;
	t->kcarry = 0;
}
