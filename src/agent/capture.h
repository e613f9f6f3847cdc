/*
 * capture.h — what the agent records when: the capture windows (capture.c,
 * docs/steps.md).  Below the sampler, which reads the gates at every
 * sample; above the floor, env, rx and sigwrap.  Normal context unless said.
 */
#ifndef CBN_AGENT_CAPTURE_H
#define CBN_AGENT_CAPTURE_H

#include <stdatomic.h>
#include <stdint.h>

#include "agent.h"

/* capture_is_on: 1 while recording (always, without controls); every
 * recorder checks it (a load of the header's gates, shared with the
 * launcher: cbn_gates.h).  SIGNAL-SAFE. */
extern _Atomic uint64_t *capture_word AGENT_HIDDEN;
static inline int capture_is_on(void)
{
	return !(atomic_load_explicit(capture_word, memory_order_relaxed) & 0xffffffffull);
}
/* cbn_step() calls so far. */
extern _Atomic uint64_t capture_steps AGENT_HIDDEN;

/* The constructor, before the first sampler is armed; around a fork; at
 * exit (the open window closes). */
void capture_init(void) AGENT_HIDDEN;
void capture_before_fork(void) AGENT_HIDDEN;
void capture_after_fork_child(void) AGENT_HIDDEN;
void capture_exit(void) AGENT_HIDDEN;
/* A step (cbn_step, a step range or mark): 1 when its marker is recorded. */
int capture_step(void) AGENT_HIDDEN;
/* A range or mark name that --step makes a step. */
int capture_is_step_name(const char *name) AGENT_HIDDEN;
/* An NVTX range opened (open 1) or closed: --capture-range nvtx:NAME. */
void capture_nvtx_range(const char *domain, const char *name, int open) AGENT_HIDDEN;

#endif
