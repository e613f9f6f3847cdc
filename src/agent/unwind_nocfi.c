/*
 * unwind_nocfi.c — unwinding past code without unwind information (docs/
 * symbols.md, "Code without unwind information"): JIT code in anonymous
 * memory (oneDNN's convolution kernels, LuaJIT, V8, CPython's perf
 * trampolines) and assembly functions without .cfi directives stop
 * libunwind, and every caller above them (the operator, the Python line)
 * would be lost.  From the frame where the CFI ran out the caller is found by
 * the frame pointer when it is valid, else by scanning at most
 * CBN_UWM_SCAN_WORDS words of the stack for a return address into known code
 * (Breakpad's and crashpad's stack scan), each candidate checked three ways:
 * the bytes before it are a call instruction, a direct call's target is the
 * function that stopped the unwinding (stale return addresses left in a
 * frame's uninitialised slots are the known false positive), and one more
 * step by the caller's CFI from it lands on known code after a call.  Then
 * libunwind goes on by CFI.  What was recovered, or that nothing was, is
 * said in the stack with marker words (cbn_format.h, CBN_UWM_*).
 *
 * SIGNAL-SAFE (sigpath.h), between unwind_begin and unwind_end: reads of
 * the stack through unwind_word, of module code directly (the snapshot's
 * modules stay mapped while an unwind runs), libunwind's cursor.
 */
#include <libunwind.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>

#include "floor.h"
#include "jittab.h"
#include "modules.h"
#include "unwind.h"
#include "fastwalk.h"
#include "unwind_nocfi.h"

#define RECOVER_CANDIDATES 8             /* return addresses tried per recovery */
#define RECOVER_FP_SPAN (256u << 10)     /* a frame pointer at most this far above sp */
#define RECOVER_TARGET_SPAN (1u << 20)   /* a direct call's target this far below the stop */
#define RECOVER_CHAIN_MAX 512            /* frames one frame-pointer chain may give */

/*
 * SIGNAL-SAFE.  The length of the call instruction that ends right before
 * ret (a module's code, read directly: the snapshot keeps it mapped), 0 when
 * none does; *target: a direct call's destination, else 0.  The forms are
 * E8 rel32 and FF /2 (an indirect call through a register or memory, with
 * ModRM, SIB, displacement and an optional REX prefix).
 */
static int recover_call_before(uint64_t ret, uint64_t *target)
{
	const unsigned char *b = (const unsigned char *)ret;
	int len;

	*target = 0;
	if (!modules_snap_exec(ret - 7))
		return 0;
	if (b[-5] == 0xe8) {
		int32_t rel;

		memcpy(&rel, b - 4, 4);
		*target = ret + (uint64_t)(int64_t)rel;
		return 5;
	}
	for (len = 2; len <= 7; len++) {
		const unsigned char *i = b - len;
		unsigned mod, rm, need;

		if (*i >= 0x40 && *i <= 0x4f)
			i++;
		if (i[0] != 0xff || ((i[1] >> 3) & 7) != 2)
			continue;
		mod = i[1] >> 6;
		rm = i[1] & 7;
		need = (unsigned)(i - (b - len)) + 2;
		if (mod != 3 && rm == 4)
			need++;                  /* SIB */
		if (mod == 1)
			need += 1;
		else if (mod == 2 || (mod == 0 && rm == 5) ||
			 (mod == 0 && rm == 4 && (i[2] & 7) == 5))
			need += 4;
		if (need == (unsigned)len)
			return len;
	}
	return 0;
}

/* SIGNAL-SAFE.  Could ra be the return address of the frame that called
 * the code that stopped the unwinding at stop?  Known code right after a
 * call, with CFI; a direct call must lead to the stopping function (or to a
 * PLT stub of ra's own module when the stop lies in another one). */
static int recover_ra_ok(uint64_t ra, uint64_t stop)
{
	uint64_t target;

	if (!modules_snap_exec(ra) || !recover_call_before(ra, &target) || !unwind_has_cfi(ra - 1))
		return 0;
	if (!target)
		return 1;
	if (target <= stop && stop - target < RECOVER_TARGET_SPAN)
		return 1;
	/* a call through a PLT stub into another module (the stop is not in
	 * ra's module, and the stub is near ra: the same module's .plt) */
	return modules_snap_exec(target) && (target > ra ? target - ra : ra - target) < (64u << 20) &&
	       !(stop > ra - (64u << 20) && stop < ra + (64u << 20));
}

/* SIGNAL-SAFE.  Start c at (ip, sp, bp), ip a return address; the other
 * registers are the interrupted ones (only CFI that uses them reads them). */
static int recover_cursor(unw_cursor_t *c, const ucontext_t *uc, uint64_t ip, uint64_t sp,
			  uint64_t bp)
{
	ucontext_t fake;

	memcpy(&fake, uc, sizeof(fake));
	fake.uc_mcontext.gregs[REG_RIP] = (greg_t)ip;
	fake.uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
	fake.uc_mcontext.gregs[REG_RBP] = (greg_t)bp;
	return unwind_cursor_init(c, &fake, 0);
}

/* SIGNAL-SAFE.  A candidate caller confirmed one frame further: the step
 * from it by its CFI ends the stack or reaches known code after a call. */
static int recover_lookahead(const ucontext_t *uc, uint64_t ip, uint64_t sp, uint64_t bp)
{
	struct fastwalk_cursor w;
	unw_cursor_t c;
	uint64_t next, nsp;
	int r;

	/* the agent's walk first (fastwalk.h), libunwind's cursor where it
	 * cannot follow: the same step by the same CFI */
	fastwalk_caller_at(&w, ip, sp, bp);
	r = fastwalk_step(&w);
	if (r == 0)
		return 1;
	if (r == 1) {
		next = w.pc;
		nsp = w.sp;
	} else {
		if (recover_cursor(&c, uc, ip, sp, bp) < 0)
			return 0;
		r = unwind_cursor_step(&c);
		if (r == 0)
			return 1;
		if (r < 0 || unwind_cursor_reg(&c, UNW_REG_IP, &next) < 0 ||
		    unwind_cursor_reg(&c, UNW_REG_SP, &nsp) < 0)
			return 0;
	}
	if (!next)
		return 1;
	if (nsp <= sp)
		return 0;
	{
		uint64_t target;

		return modules_snap_exec(next) && recover_call_before(next, &target);
	}
}

/*
 * SIGNAL-SAFE.  Code without CFI that keeps no frame of its own (a JIT
 * kernel or an assembly leaf that never touches rbp) leaves rbp its
 * caller's, so the frame pointer's return address at bp + 8 is the
 * caller's caller's and the caller itself would be lost (perf's -g loses
 * it too).  Its return address then lies between sp and bp: the first
 * word there that could be one (recover_ra_ok) whose frame, stepped by its
 * CFI at most RECOVER_INNER_STEPS times, reaches that same return address
 * at that same slot (ra at bp + 8, the stack at bp + 16) is the caller,
 * and 1 with its (ip, sp, bp).  A stale return address left in a frame's
 * locals reaches that slot only when it came from the same call site at
 * the same depth.
 */
#define RECOVER_INNER_STEPS 4
static int recover_inner(uint64_t stop, uint64_t sp, uint64_t bp, uint64_t ra,
			 uint64_t *nip, uint64_t *nsp, uint64_t *nbp)
{
	struct fastwalk_cursor w;
	uint64_t v, slot;
	int tried = 0, k;

	for (slot = sp; slot < bp && slot < sp + 8u * CBN_UWM_SCAN_WORDS &&
			tried < RECOVER_CANDIDATES; slot += 8) {
		if (unwind_word(slot, &v) < 0)
			return 0;
		if (v < 4096 || v == ra || !recover_ra_ok(v, stop))
			continue;
		tried++;
		fastwalk_caller_at(&w, v, slot + 8, bp);
		for (k = 0; k < RECOVER_INNER_STEPS && fastwalk_step(&w) == 1; k++) {
			if (w.sp > bp + 16)
				break;
			if (w.sp == bp + 16 && w.pc == ra) {
				*nip = v;
				*nsp = slot + 8;
				*nbp = bp;
				return 1;
			}
		}
	}
	return 0;
}

/* SIGNAL-SAFE.  A caller of the frame (stop, sp, bp) whose code has no CFI:
 * by its frame pointer (or the frame below it that the frame pointer
 * skips: recover_inner), else by scanning the stack.  Returns CBN_UWM_FP or
 * CBN_UWM_SCAN with the caller's (ip, sp, bp), or 0. */
static int recover_caller(const ucontext_t *uc, uint64_t stop, uint64_t sp, uint64_t bp,
			  uint64_t *nip, uint64_t *nsp, uint64_t *nbp)
{
	uint64_t v, saved, hi = agent_tls.ustk_hi;
	int i, tried = 0;

	if (bp > sp && bp - sp < RECOVER_FP_SPAN && !(bp & 7) && unwind_word(bp + 8, &v) == 0 &&
	    unwind_word(bp, &saved) == 0 && recover_ra_ok(v, stop) &&
	    recover_lookahead(uc, v, bp + 16, saved)) {
		if (recover_inner(stop, sp, bp, v, nip, nsp, nbp))
			return CBN_UWM_SCAN;
		*nip = v;
		*nsp = bp + 16;
		*nbp = saved;
		return CBN_UWM_FP;
	}
	for (i = 0; i < CBN_UWM_SCAN_WORDS && tried < RECOVER_CANDIDATES; i++) {
		uint64_t slot = sp + 8 * (uint64_t)i;

		if (hi && slot + 8 > hi)
			break;
		if (unwind_word(slot, &v) < 0)
			break;
		if (v < 4096 || !modules_snap_exec(v))
			continue;
		if (!recover_ra_ok(v, stop))
			continue;
		tried++;
		if (!recover_lookahead(uc, v, slot + 8, bp))
			continue;
		*nip = v;
		*nsp = slot + 8;
		*nbp = bp;
		return CBN_UWM_SCAN;
	}
	return 0;
}

/*
 * The pcs whose frame ends the stack: their CFI leaves the return address
 * undefined (_start, a thread's start_thread, clone), so the unwinding
 * rightly stopped there.  Learnt by one cursor step the first time a
 * stack ends at such a pc, then a lookup: every sample of a thread ends at
 * the same one.  Entries as unwind.c's CFI cache: the pc above bit 16, the
 * module snapshot's sequence in bits 1-15, so that an answer holds only for
 * the map it was learnt in; bit 0 set.
 */
#define LAST_CACHE_BITS 8
static _Atomic uint64_t last_cache[1u << LAST_CACHE_BITS];

static uint64_t last_key(uint64_t ip, size_t *slot)
{
	*slot = (size_t)((ip * 0x9e3779b97f4a7c15ull) >> (64 - LAST_CACHE_BITS));
	return ip << 16 | (uint64_t)(modules_snap_seq() & 0x7fffu) << 1 | 1u;
}

/* SIGNAL-SAFE.  1 when ip's frame is known to end the stack. */
static int last_known(uint64_t ip)
{
	size_t slot;
	uint64_t key = last_key(ip, &slot);

	return ip < (1ull << 47) &&
	       atomic_load_explicit(&last_cache[slot], memory_order_relaxed) == key;
}

static void last_learn(uint64_t ip)
{
	size_t slot;
	uint64_t key = last_key(ip, &slot);

	if (ip < (1ull << 47))
		atomic_store_explicit(&last_cache[slot], key, memory_order_relaxed);
}

/*
 * SIGNAL-SAFE.  Start c at frame n-1 of pcs (the interrupted frame, then n-1
 * steps of libunwind's cursor by CFI), which must be pcs[n-1]; its stack
 * and frame pointers in *sp, *bp.  -1 when the cursor does not reach it.
 */
static int recover_reach(unw_cursor_t *c, const ucontext_t *uc, const uint64_t *pcs, int n,
			 uint64_t *sp, uint64_t *bp)
{
	uint64_t v;
	int k;

	*sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
	*bp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
	if (unwind_cursor_init(c, uc, 1) < 0)
		return -1;
	for (k = 1; k < n; k++)
		if (unwind_cursor_step(c) <= 0)
			return -1;
	if (n > 1) {
		if (unwind_cursor_reg(c, UNW_REG_IP, &v) < 0 || v != pcs[n - 1] ||
		    unwind_cursor_reg(c, UNW_REG_SP, sp) < 0 ||
		    unwind_cursor_reg(c, UNW_X86_64_RBP, bp) < 0)
			return -1;
	}
	return 0;
}

/*
 * SIGNAL-SAFE.  From c (at pcs[n-1], which has CFI), step by CFI while the
 * frames have it: the frames libunwind's trace cache leaves out when a
 * caller has no CFI (it stops at the last frame it can cache; seen under
 * PyTorch, a library constructor called from _init).  Returns the new count;
 * *more: 1 when it stopped at a frame without CFI (pcs[n-1]), *sp and *bp
 * then that frame's.
 */
static int recover_follow(unw_cursor_t *c, uint64_t *pcs, int n, int cap, uint64_t *sp,
			  uint64_t *bp, int *more)
{
	uint64_t v;
	int k;

	*more = 0;
	while (n < cap) {
		k = unwind_cursor_step(c);
		if (k <= 0 || unwind_cursor_reg(c, UNW_REG_IP, &v) < 0 || !v)
			return n;        /* the end, or a failure with CFI */
		pcs[n++] = v;
		if (!unwind_has_cfi(v - 1))
			break;           /* no CFI: recover past it */
	}
	if (n >= cap || unwind_cursor_reg(c, UNW_REG_SP, sp) < 0 ||
	    unwind_cursor_reg(c, UNW_X86_64_RBP, bp) < 0)
		return n;
	*more = 1;
	return n;
}

/* SIGNAL-SAFE.  Code without CFI the agent knows as code: a module's
 * (assembly, V8's builtins) or memory the program made executable. */
static int recover_nocfi_code(uint64_t ra)
{
	if (modules_snap_exec(ra))
		return !unwind_has_cfi(ra - 1);
	return jittab_holds(ra);
}

/*
 * SIGNAL-SAFE.  Code without CFI that keeps frame pointers (V8's JavaScript
 * and builtins, the JVM with -XX:+PreserveFramePointer) calling more such
 * code: follow the chain of saved frame pointers from (sp, bp) while each
 * return address lies in code without CFI that the agent knows, each frame
 * pointer above the last and within the stack, appending those return
 * addresses to pcs.  The chain ends at a return address into code with CFI,
 * checked as a frame-pointer recovery is (a call before it, one step
 * further by its CFI): 1, that caller's registers in *nip, *nsp, *nbp and
 * its pc appended.  -1 when the chain went some way and then broke (what it
 * gave is kept), 0 when the first return address is no such code.
 */
static int recover_chain(const ucontext_t *uc, uint64_t sp, uint64_t bp, uint64_t *pcs, int *n,
			 int cap, uint64_t *nip, uint64_t *nsp, uint64_t *nbp)
{
	uint64_t v, saved, target, hi = agent_tls.ustk_hi;
	int k;

	for (k = 0; k < RECOVER_CHAIN_MAX && *n < cap; k++) {
		if (bp < sp || bp - sp >= RECOVER_FP_SPAN || (bp & 7) || (hi && bp + 16 > hi) ||
		    unwind_word(bp + 8, &v) < 0 || unwind_word(bp, &saved) < 0 || v < 4096)
			break;
		if (k > 0 && modules_snap_exec(v) && unwind_has_cfi(v - 1)) {
			if (!recover_call_before(v, &target) ||
			    !recover_lookahead(uc, v, bp + 16, saved))
				break;
			*nip = v;
			*nsp = bp + 16;
			*nbp = saved;
			pcs[(*n)++] = v;
			return 1;
		}
		if (!recover_nocfi_code(v) || saved <= bp)
			break;
		pcs[(*n)++] = v;
		sp = bp + 16;
		bp = saved;
	}
	return k > 0 ? -1 : 0;
}

/*
 * SIGNAL-SAFE.  The caller of (ip, sp, bp), a frame without CFI, appended
 * to pcs after its marker: a chain of frames without CFI by frame pointer
 * up to a caller with CFI (recover_chain), else recover_caller's; 1 and its
 * registers in *nip, *nsp, *nbp.  Else 0 with a stop marker appended, after
 * the frames of a chain that broke when recover_caller found nothing.
 */
static int recover_mark(const ucontext_t *uc, uint64_t *pcs, int *n, int cap, uint64_t ip,
			uint64_t sp, uint64_t bp, uint64_t *nip, uint64_t *nsp, uint64_t *nbp)
{
	unsigned where = modules_snap_exec(ip) ? CBN_UWM_NOCFI : CBN_UWM_JIT;
	int kind, chain, m0 = *n;

	pcs[(*n)++] = CBN_UWM_MAKE(CBN_UWM_FP, where);
	chain = recover_chain(uc, sp, bp, pcs, n, cap - 1, nip, nsp, nbp);
	if (chain > 0)
		return 1;
	/* no chain, or one that broke: the frame pointer's or the scan's
	 * caller of the frame itself first (a frame pointer that only looked
	 * like a chain's never hides what they find), else what the chain gave */
	kind = recover_caller(uc, ip, sp, bp, nip, nsp, nbp);
	if (!kind && chain < 0) {
		where = modules_snap_exec(pcs[*n - 1]) ? CBN_UWM_NOCFI : CBN_UWM_JIT;
		pcs[(*n)++] = CBN_UWM_MAKE(CBN_UWM_STOP, where);
		return 0;
	}
	*n = m0;
	if (!kind) {
		pcs[(*n)++] = CBN_UWM_MAKE(CBN_UWM_STOP, where);
		return 0;
	}
	pcs[(*n)++] = CBN_UWM_MAKE(kind, where);
	pcs[(*n)++] = *nip;
	return 1;
}

/*
 * SIGNAL-SAFE, between unwind_begin and unwind_end.  pcs[0..n): a sample's
 * native frames, pcs[0] the pc interrupted in uc.  When the last one has no
 * CFI (JIT code, assembly without .cfi directives) the unwinding went no
 * further: go on past it by frame pointer or stack scan (recover_caller),
 * then by CFI again, at most CBN_UWM_MAX times, and say so with marker words
 * (cbn_format.h, CBN_UWM_*).  When the last one has CFI and is not the end
 * of the stack, the trace cache stopped short of a caller without CFI: the
 * frames up to it by CFI first.  Returns the new count, at most cap.
 */
int unwind_recover(const ucontext_t *uc, uint64_t *pcs, int n, int cap)
{
	unw_cursor_t c;
	uint64_t ip, sp, bp, nip, nsp, nbp;
	int r, more, n0;

	if (n <= 0 || n + 2 > cap)
		return n;
	ip = pcs[n - 1];
	if (unwind_has_cfi(n == 1 ? ip : ip - 1)) {
		if (last_known(ip) || recover_reach(&c, uc, pcs, n, &sp, &bp) < 0)
			return n;
		n0 = n;
		n = recover_follow(&c, pcs, n, cap, &sp, &bp, &more);
		if (n == n0)
			last_learn(ip); /* the stack's true end */
		if (!more)
			return n;
		ip = pcs[n - 1];
	} else if (recover_reach(&c, uc, pcs, n, &sp, &bp) < 0) {
		return n;
	}
	for (r = 0; r < CBN_UWM_MAX && n + 2 <= cap; r++) {
		if (!recover_mark(uc, pcs, &n, cap, ip, sp, bp, &nip, &nsp, &nbp))
			return n;
		if (recover_cursor(&c, uc, nip, nsp, nbp) < 0)
			return n;
		n = recover_follow(&c, pcs, n, cap, &sp, &bp, &more);
		if (!more)
			return n;
		ip = pcs[n - 1];
	}
	return n;
}

/*
 * SIGNAL-SAFE, between unwind_begin and unwind_end.  unwind_recover for a
 * stack the agent's own walk gave up to pcs[n-1], a frame without CFI
 * whose registers are *at: the same recovery of its caller, then the
 * agent's walk again from each recovered caller, and libunwind's cursor
 * only from a frame that walk cannot follow.  Returns the new count.
 */
int unwind_recover_walk(const ucontext_t *uc, uint64_t *pcs, int n, int cap,
			const struct fastwalk_cursor *at)
{
	struct fastwalk_cursor w;
	unw_cursor_t c;
	uint64_t ip = at->pc, sp = at->sp, bp = at->bp, nip, nsp, nbp;
	int r, k, more;

	if (n <= 0 || n + 2 > cap)
		return n;
	for (r = 0; r < CBN_UWM_MAX && n + 2 <= cap; r++) {
		if (!recover_mark(uc, pcs, &n, cap, ip, sp, bp, &nip, &nsp, &nbp))
			return n;
		fastwalk_caller_at(&w, nip, nsp, nbp);
		while ((k = fastwalk_step(&w)) == 1) {
			if (n >= cap)
				return n;
			pcs[n++] = w.pc;
		}
		if (k == 0)
			return n;
		if (k != FASTWALK_NOCFI) {
			/* from the frame the walk cannot follow, by the cursor */
			if (recover_cursor(&c, uc, w.pc, w.sp, w.bp) < 0)
				return n;
			n = recover_follow(&c, pcs, n, cap, &w.sp, &w.bp, &more);
			if (!more)
				return n;
			w.pc = pcs[n - 1];
		}
		ip = w.pc;
		sp = w.sp;
		bp = w.bp;
	}
	return n;
}

