/*
 * unwind_place.c — where a kernel stack's system call came from (docs/
 * agent.md section 2, "Placement"): the user stack at the kernel entry,
 * walked up to a frame still live in the interrupted stack, which is walked
 * too, each frame with its stack pointer.  Both walks are the agent's own
 * (fastwalk.h); where it cannot follow a frame, the sample's placements are
 * made again by libunwind's cursor (unwind.h), reading the kernel's copy of
 * the entry's stack through unwind_overlay.
 *
 * SIGNAL-SAFE (sigpath.h), between unwind_begin and unwind_end.
 */
#include <string.h>
#include <ucontext.h>

#include <libunwind.h>

#include "fastwalk.h"
#include "unwind.h"

_Static_assert(sizeof(unw_cursor_t) <= sizeof(((struct unwind_place_ctx *)0)->cursor),
	       "unwind_place_ctx.cursor too small for libunwind's cursor");

/* The interrupted thread's frames with their stack pointers, one more (0:
 * no more).  The first call starts the cursor. */
static int unwind_place_step(struct unwind_place_ctx *c)
{
	unw_cursor_t *cur = (unw_cursor_t *)c->cursor;
	uint64_t ip, sp;
	int k;

	if (c->cdone || c->ncur >= UNWIND_PLACE_DEPTH)
		return 0;
	if (c->ncur < 0) {
		c->ncur = 0;
		c->fail = 0;
		if (!c->slow) {
			c->fc.pc = (uint64_t)c->uc->uc_mcontext.gregs[REG_RIP];
			c->fc.sp = (uint64_t)c->uc->uc_mcontext.gregs[REG_RSP];
			c->fc.bp = (uint64_t)c->uc->uc_mcontext.gregs[REG_RBP];
			c->fc.bp_ok = c->fc.exact = 1;
			c->fc.copy = NULL;
		} else if (unwind_cursor_init(cur, c->uc, 1) < 0) {
			goto done;
		}
	} else if (!c->slow) {
		k = fastwalk_step(&c->fc);
		if (k <= 0) {
			c->fail = k < 0;
			goto done;
		}
	} else if (unwind_cursor_step(cur) <= 0) {
		goto done;
	}
	if (!c->slow) {
		ip = c->fc.pc;
		sp = c->fc.sp;
	} else if (unwind_cursor_reg(cur, UNW_REG_IP, &ip) < 0 ||
		   unwind_cursor_reg(cur, UNW_REG_SP, &sp) < 0) {
		goto done;
	}
	if (c->ncur > 0 && sp <= c->csp[c->ncur - 1])
		goto done;
	c->cpc[c->ncur] = ip;
	c->csp[c->ncur] = sp;
	c->ncur++;
	return 1;
done:
	c->cdone = 1;
	return 0;
}

/* The interrupted frames up to one above stack pointer sp (as far as there
 * are). */
static void unwind_place_upto(struct unwind_place_ctx *c, uint64_t sp)
{
	while ((c->ncur <= 0 || c->csp[c->ncur - 1] <= sp) && unwind_place_step(c))
		;
}

/*
 * Is the entry's frame i (ip/sp: its pc and stack pointer, and its caller's)
 * the sample's frame j, still live?  The same stack pointer, the same caller
 * frame, the same return address into it.  A frame that returned and was
 * replaced by one at the same depth fails on its return address unless the
 * new one was called from the same call site (then the stack reads the same).
 */
static int unwind_place_match(const struct unwind_place_ctx *c, const uint64_t *ip,
			      const uint64_t *sp, int j)
{
	return sp[0] == c->csp[j] && sp[1] == c->csp[j + 1] && ip[1] == c->cpc[j + 1] &&
	       j + 1 < c->npcs && c->pcs[j + 1] == c->cpc[j + 1];
}

/*
 * The entry's frames, from the user registers and stack the kernel copied
 * at entry (ip: where the system call returns to, not a return address),
 * each matched against the sample's live frames.  step: one frame up
 * (1, 0 at the end, -1 cannot follow); ip/sp: each frame's and its caller's.
 */
struct place_walk {
	int slow;
	struct fastwalk_cursor fc;
	unw_cursor_t cur;
};

static int place_walk_step(struct place_walk *pw, uint64_t *ip, uint64_t *sp)
{
	int k;

	if (!pw->slow) {
		k = fastwalk_step(&pw->fc);
		if (k <= 0)
			return k;
		*ip = pw->fc.pc;
		*sp = pw->fc.sp;
		return 1;
	}
	if (unwind_cursor_step(&pw->cur) <= 0 || unwind_cursor_reg(&pw->cur, UNW_REG_IP, ip) < 0 ||
	    unwind_cursor_reg(&pw->cur, UNW_REG_SP, sp) < 0)
		return 0;
	return 1;
}

/* unwind_place by the walk c->slow names: the pcs placed, or -1 when the
 * agent's walk could not follow a frame (nothing placed yet). */
static int unwind_place_by(struct unwind_place_ctx *c, const struct kstacks_user *u,
			   uint64_t *pc, uint16_t *drop)
{
	struct place_walk pw;
	ucontext_t fake;
	uint64_t ip[2], sp[2], nip, nsp;
	int i, j, k, n = 0;

	if (c->ncur < 0)
		c->cdone = 0;
	unwind_place_upto(c, u->sp);
	if (c->fail)
		return -1;
	if (c->ncur < 1)
		return 0;
	pw.slow = c->slow;
	if (!pw.slow) {
		pw.fc.pc = u->ip;
		pw.fc.sp = u->sp;
		pw.fc.bp = u->bp;
		pw.fc.bp_ok = pw.fc.exact = 1;
		pw.fc.copy = (const unsigned char *)u->stack;
		pw.fc.copy_lo = u->sp;
		pw.fc.copy_hi = u->sp + (uint64_t)u->nstack * 8;
	} else {
		/* The registers at kernel entry (x86-64: libunwind's
		 * unw_context_t is a ucontext_t; the others' values matter
		 * only to CFI that uses them, and are the interrupted ones). */
		memcpy(&fake, c->uc, sizeof(fake));
		fake.uc_mcontext.gregs[REG_RIP] = (greg_t)u->ip;
		fake.uc_mcontext.gregs[REG_RSP] = (greg_t)u->sp;
		fake.uc_mcontext.gregs[REG_RBP] = (greg_t)u->bp;
		unwind_overlay(u->stack, (uintptr_t)u->sp, (uintptr_t)u->sp + (uintptr_t)u->nstack * 8);
		if (unwind_cursor_init(&pw.cur, &fake, 1) < 0)
			goto out;
	}
	ip[1] = u->ip;
	sp[1] = u->sp;
	for (i = 0; i < CBN_KPLACE_MAX_FRAMES; i++) {
		ip[0] = ip[1];
		sp[0] = sp[1];
		pc[i] = ip[0];
		k = place_walk_step(&pw, &nip, &nsp);
		if (k < 0)
			return -1;
		if (k == 0 || nsp <= sp[0])
			break; /* the stack grows down: a caller is above */
		ip[1] = nip;
		sp[1] = nsp;
		unwind_place_upto(c, sp[0]);
		if (c->fail)
			return -1;
		for (j = 0; j + 1 < c->ncur && c->csp[j] <= sp[0]; j++) {
			if (unwind_place_match(c, ip, sp, j)) {
				*drop = (uint16_t)(j + 1);
				n = i + 1;
				goto out;
			}
		}
		if (c->cdone && sp[0] > c->csp[c->ncur - 1])
			break; /* past the frames the sample has */
	}
out:
	unwind_overlay(NULL, 0, 0);
	return n;
}

int unwind_place(void *ctx, const struct kstacks_user *u, uint64_t *pc, uint16_t *drop)
{
	struct unwind_place_ctx *c = ctx;
	int n;

	if (!c->slow) {
		n = unwind_place_by(c, u, pc, drop);
		if (n >= 0)
			return n;
		/* the agent's walk could not follow a frame: this sample's
		 * placements by libunwind's cursor, from the start */
		c->slow = 1;
		c->ncur = -1;
	}
	n = unwind_place_by(c, u, pc, drop);
	return n > 0 ? n : 0;
}
