/*
 * unwind.h — the agent's private libunwind (unwind.c), over the module
 * snapshot (modules.h) and the hold on unwinding (unwind_hold.h).
 */
#ifndef CBN_AGENT_UNWIND_H
#define CBN_AGENT_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#include "agent.h"
#include "fastwalk.h"
#include "kstacks.h"

/* Normal context.  unwind_init: in the constructor, before any sampler is
 * armed (0, or -1 with why filled: samples are then PC-only); thread_end:
 * the calling thread's trace cache goes; in_copy: pc lies in the private
 * libunwind's text. */
int unwind_init(char *why, size_t len) AGENT_HIDDEN;
void unwind_thread_end(void) AGENT_HIDDEN;
int unwind_in_copy(uintptr_t pc) AGENT_HIDDEN;
/* unwind_begin for a backtrace of this thread in normal code, from an address
 * in the caller's frame (the unwinder's own frames below it are direct). */
int unwind_begin_here(uintptr_t frame) AGENT_HIDDEN;
/* The calling thread's return addresses from its caller on, each with its
 * frame's stack pointer (the address was pushed at sps[i] - 8).  Normal
 * context, slower than unwind_backtrace: for a capture to be cached. */
int unwind_backtrace_sp(uint64_t *ips, uintptr_t *sps, int max) AGENT_HIDDEN;

/* SIGNAL-SAFE.  unwind_begin returns 1 when the caller may unwind (then it
 * must call unwind_end), 0 while unwinding is held (fork, dlclose);
 * unwind_backtrace only between the two.  sp: the stack pointer of the stack
 * about to be unwound when it is this thread's own (the interrupted one in a
 * handler, the current one in normal code), else 0. */
int unwind_available(void) AGENT_HIDDEN;
int unwind_begin(uint64_t sp) AGENT_HIDDEN;
void unwind_end(void) AGENT_HIDDEN;
int unwind_backtrace(void **buf, int size) AGENT_HIDDEN;

/*
 * SIGNAL-SAFE, between unwind_begin and unwind_end: a kstacks_placer's place()
 * (kstacks.h), for samples that carry kernel stacks.  It unwinds the user
 * stack at the kernel entry (libunwind's cursor from the entry's ip, sp and
 * bp, reading the stack the kernel copied then, the live stack above it) up
 * to a frame that is still live in the interrupted thread's stack, which it
 * unwinds too with each frame's stack pointer, once per sample and only as
 * deep as the entries need; at most CBN_KPLACE_MAX_FRAMES steps per entry and
 * UNWIND_PLACE_DEPTH per sample.  Both walks are the agent's own; where it
 * cannot follow a frame, the placement is done again by libunwind's cursor.
 * ctx: a struct unwind_place_ctx with ncur = -1 and slow = 0 (the rest need
 * not be initialised).
 */
#define UNWIND_PLACE_DEPTH 64
struct unwind_place_ctx {
	const ucontext_t *uc;            /* the interrupted context */
	const uint64_t *pcs;             /* the sample's pcs (sample_frames) */
	int npcs;
	int ncur;                        /* frames below, -1 before the first place() */
	int cdone;                       /* no frame beyond cpc[ncur - 1] */
	uint64_t cpc[UNWIND_PLACE_DEPTH], csp[UNWIND_PLACE_DEPTH];
	/* The walk over the interrupted stack, stepped only as far as the
	 * entries' frames need: the agent's own (fastwalk.h), or, once it
	 * could not follow a frame (slow, 0 at first), libunwind's cursor
	 * (a step may cost two sigprocmask). */
	int slow;
	int fail;                        /* the agent's walk stopped where it could not follow */
	struct fastwalk_cursor fc;
	_Alignas(16) unsigned char cursor[1024];
};
int unwind_place(void *ctx, const struct kstacks_user *u, uint64_t *pc, uint16_t *drop)
	AGENT_HIDDEN;

/* SIGNAL-SAFE, between unwind_begin and unwind_end: what unwind_nocfi.c
 * uses of libunwind.  has_cfi: 1 when libunwind has unwind information (an
 * FDE) for pc; cursor_init (c: an unw_cursor_t) from uc (signal_frame: its
 * pc is exact, not a return address), cursor_step, cursor_reg: a register;
 * word: a word of memory at addr (8-aligned), 0 or -1. */
int unwind_has_cfi(uint64_t pc) AGENT_HIDDEN;
int unwind_has_cfi_fresh(uint64_t pc) AGENT_HIDDEN;
int unwind_cursor_init(void *c, const ucontext_t *uc, int signal_frame) AGENT_HIDDEN;
int unwind_cursor_step(void *c) AGENT_HIDDEN;
int unwind_cursor_reg(void *c, int reg, uint64_t *v) AGENT_HIDDEN;
int unwind_word(uintptr_t addr, uint64_t *v) AGENT_HIDDEN;
/* SIGNAL-SAFE.  While data is set, libunwind's reads of [lo, hi) come from
 * it (the kernel's copy of a stack: unwind_place.c); NULL ends it. */
void unwind_overlay(const void *data, uintptr_t lo, uintptr_t hi) AGENT_HIDDEN;

#endif
