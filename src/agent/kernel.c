/*
 * kernel.c — kernel stacks for each thread sampled with a perf event: whether
 * to take them (CBN_KERNEL_STACKS), opening the thread's kernel-only event at
 * its first sample, draining its ring into every sample (kstacks.c), and the
 * header's account: taken on how many threads, kernel samples kept and lost,
 * or why there are none.
 *
 * SIGNAL-SAFE: kernel_thread_sample and what it calls (sigpath.h); the rest
 * runs in normal context.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "kstacks.h"
#include "sigpath.h"

/* 0: CBN_KERNEL_STACKS=0 (read by the constructor, before any sampler; the
 * header says so at the first sample of each image, fork children too). */
static int kernel_want = 1;
/* A refusal that holds for every thread of the process (errno). */
static _Atomic int kernel_refused;

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
	const char *q = getenv(CBN_ENV_KSTACKS);

	kernel_want = !(q && strcmp(q, "0") == 0);
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
	ret = kstacks_open(&t->kring, agent.period_ns);
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

size_t kernel_thread_sample(struct agent_thread *t, struct kstacks_placer *pl,
			    struct cbn_kstacks *out, size_t cap, uint32_t *ksamples)
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
	*ksamples = kept + lost;
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
	return used;
}

void kernel_thread_begin(struct agent_thread *t)
{
	/* A fork child's copy names the parent's ring, which it does not have
	 * (VM_DONTCOPY): forget it, never unmap it. */
	t->kring.base = NULL;
	t->kring.len = 0;
	t->ktried = 0;
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
}
