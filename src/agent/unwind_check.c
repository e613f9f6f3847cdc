/*
 * unwind_check.c — the unwinder's self-check, a test mode
 * (CBN_UNWIND_CHECK=1, docs/agent.md).  The handler's unwind takes
 * shortcuts: libunwind's per-thread trace cache (frame rules kept by pc),
 * the agent's cache of which pcs have CFI (unwind.c).  Here each sample's
 * frames are compared with a full unwind of the same interrupted registers:
 * libunwind's cursor stepped frame by frame, which looks every frame's rules
 * up afresh, as far as frames have CFI (past one without, the cursor only
 * guesses), and the cached CFI answer of the last frame with a fresh
 * lookup.  What differs is counted in the file header (with the first
 * difference), so a test can require none on real programs.  It costs a
 * full unwind a sample: never on by default.
 */
#include <string.h>

#include <libunwind.h>

#include "env.h"
#include "floor.h"
#include "unwind.h"
#include "unwind_check.h"
#include "../format/cbn_format.h"

static int check_on;

void unwind_check_config(void)
{
	const char *q = agent_getenv(CBN_ENV_UNWIND_CHECK);

	/* "inject": the checker's own test (ctest e2e.unwind_check): one
	 * compared stack in 16 has a wrong frame, which it must catch */
	check_on = q && strcmp(q, "1") == 0 ? 1 : q && strcmp(q, "inject") == 0 ? 2 : 0;
}

int unwind_check_on(void)
{
	return check_on;
}

/* SIGNAL-SAFE.  The first difference, once per process. */
static void check_first(struct cbn_unwind_check *c, int at, uint64_t cached, uint64_t full)
{
	uint32_t none = 0;

	if (!atomic_compare_exchange_strong(&c->first_taken, &none, 1))
		return;
	c->first_at = (uint32_t)at;
	c->first_cached_pc = cached;
	c->first_full_pc = full;
}

void unwind_check_sample(const ucontext_t *uc, const uint64_t *pcs, int n, int truncated,
			 int fast)
{
	struct cbn_file_header *h = agent.w.hdr;
	struct cbn_unwind_check *c;
	unw_cursor_t cur;
	uint64_t ip, last = 0, full = 0;
	int i = 0, differ = -1, has;

	if (!check_on || !h || n <= 0)
		return;
	/* the exact frames: up to the first marker of a recovery */
	for (i = 0; i < n && !CBN_UWM_IS(pcs[i]); i++)
		;
	if (i < n) {
		n = i;
		truncated = 1; /* past it, what the recovery claims is not checked */
	}
	i = 0;
	c = &h->unwind_check;
	if (unwind_cursor_init(&cur, uc, 1) < 0)
		return;
	/* frame 0 is the interrupted pc itself; then each caller */
	for (;;) {
		if (unwind_cursor_reg(&cur, UNW_REG_IP, &ip) < 0 || !ip)
			break;
		if (i >= n) {
			if (!truncated) {
				differ = i; /* the full unwind found more frames */
				full = ip;
			}
			break;
		}
		if (pcs[i] + (check_on == 2 && i == 1 && !(c->samples & 15)) != ip) {
			differ = i;
			full = ip;
			break;
		}
		last = ip;
		i++;
		/* A frame without CFI ends what the caches answer for: past it
		 * the cursor guesses (libunwind's frame-pointer fallback) where
		 * the cached trace stops, and the recovery (unwind_nocfi.c)
		 * takes over, its own markers saying how sure it is. */
		if (!unwind_has_cfi_fresh(i == 1 ? ip : ip - 1))
			break;
		if (unwind_cursor_step(&cur) <= 0)
			break;
	}
	if (differ < 0 && i < n && (!last || unwind_has_cfi_fresh(i == 1 ? last : last - 1)))
		differ = i; /* the cached unwind had frames the full one had not */
	atomic_fetch_add_explicit(&c->samples, 1, memory_order_relaxed);
	if (fast)
		atomic_fetch_add_explicit(&c->fast, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->frames, (uint64_t)i, memory_order_relaxed);
	if (differ >= 0) {
		atomic_fetch_add_explicit(&c->differed, 1, memory_order_relaxed);
		check_first(c, differ, differ < n ? pcs[differ] : pcs[n - 1], full);
	}
	/* the CFI answer the recovery past code without CFI starts from */
	if (last) {
		uint64_t q = n == 1 ? last : last - 1;

		has = unwind_has_cfi(q);
		atomic_fetch_add_explicit(&c->cfi_checked, 1, memory_order_relaxed);
		if (has != unwind_has_cfi_fresh(q))
			atomic_fetch_add_explicit(&c->cfi_differed, 1, memory_order_relaxed);
	}
}

__attribute__((noinline)) void unwind_check_walk(const uint64_t *pcs, int n, int want)
{
	struct cbn_file_header *h = agent.w.hdr;
	struct cbn_unwind_check *c;
	void *full[CBN_MAX_FRAMES + 16];
	int m, i, differ = -1;

	if (!check_on || !h || n <= 1)
		return;
	c = &h->unwind_check;
	if (want + 1 > (int)(sizeof(full) / sizeof(full[0])))
		want = (int)(sizeof(full) / sizeof(full[0])) - 1;
	/* full[0] is in this function, full[1] in the caller's, where pcs[0]
	 * is (at another pc): pcs[i] must be full[i + 1] from 1 on */
	m = unwind_backtrace(full, want + 1) - 1;
	for (i = 1; i < n && i < m; i++) {
		if (pcs[i] + (check_on == 2 && i == 1 && !(c->samples & 15)) !=
		    (uint64_t)full[i + 1]) {
			differ = i;
			break;
		}
	}
	if (differ < 0 && n != m)
		differ = i;
	atomic_fetch_add_explicit(&c->samples, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->fast, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->frames, (uint64_t)(n - 1), memory_order_relaxed);
	if (differ >= 0) {
		atomic_fetch_add_explicit(&c->differed, 1, memory_order_relaxed);
		check_first(c, differ, differ < n ? pcs[differ] : 0,
			    differ < m ? (uint64_t)full[differ + 1] : 0);
	}
}
