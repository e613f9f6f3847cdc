/*
 * kernel.h — kernel stacks (kernel.c): each sampled thread's kernel-stack
 * event (kstacks.h), opened at its first sample, drained at each.  Normal
 * context: kernel_config reads CBN_KERNEL_STACKS (constructor); thread
 * begin forgets a ring a fork child does not have (and a parked state);
 * thread end (and exec) drains and closes it.
 */
#ifndef CBN_AGENT_KERNEL_H
#define CBN_AGENT_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "agent.h"
#include "kstacks.h"

void kernel_config(void) AGENT_HIDDEN;
void kernel_thread_begin(struct agent_thread *t) AGENT_HIDDEN;
void kernel_thread_end(struct agent_thread *t) AGENT_HIDDEN;

/* SIGNAL-SAFE.  At the thread's first sample, open its kernel-stack event
 * (when its sampler is a perf event); at the next ones, drain the kernel
 * stacks sampled since into out (at most cap bytes).  Returns the bytes
 * written, 0 for none; *ksamples: the kernel time those samples (kept or
 * lost) stand for, in periods of the sampler (at most weight), UINT32_MAX
 * when the thread had no kernel event over that time.
 * weight: the sample's periods of CPU; a thread whose event saw no kernel
 * mode over CBN_KSTACK_PARK_NS of them closes it (parks), and
 * kernel_thread_unpark opens it again (the sampler calls it when a parked
 * thread's system time grew).  kstacks.c (kstacks.h) is signal-safe
 * throughout. */
size_t kernel_thread_sample(struct agent_thread *t, struct kstacks_placer *pl,
			    struct cbn_kstacks *out, size_t cap, uint32_t weight,
			    uint32_t *ksamples) AGENT_HIDDEN;
void kernel_thread_unpark(struct agent_thread *t) AGENT_HIDDEN;

#endif
