/*
 * fastwalk.c — the sampler's walk of the interrupted stack without
 * libunwind, for the frames it can follow exactly (docs/agent.md, "The
 * handler's own walk").  libunwind's trace cache keeps frame rules by exact
 * pc too, but a miss pays a full unw_step (the module walk, the search
 * table, the CIE and FDE read through the validating accessor), and a
 * PyTorch loop's leaf is any instruction of a large hot set: a third of
 * the handler was those misses, and each hit still went through the
 * accessor.  Here a miss reads the rule straight from the module's tables
 * (cfi.c) and a hit is a table load; stack words are read directly, from
 * the thread's live stack only.  A frame whose code has no CFI (JIT code,
 * assembly without an FDE) ends the walk with its registers, for the
 * recovery past it (unwind_nocfi.c); what else it does not follow (a rule
 * it does not keep, a word off the live stack) gives the whole sample back
 * to libunwind, so nothing is lost and nothing guessed.
 *
 * The rules are kept per thread, in tables (by stack slot, by pc, and the
 * FDE by code granule) mapped at the thread's first sample and unmapped at
 * its end; only that thread's handler, or its own code with in_agent
 * raised, reads or writes them.  A module unloaded empties them
 * (unwind_begin, by the unloads' generation).
 */
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "cfi.h"
#include "env.h"
#include "fastwalk.h"
#include "floor.h"
#include "modules.h"

#define FW_BITS 12               /* rules kept: 4096 pcs */
#define FW_FDE_BITS 10           /* FDEs kept: 1024 granules of code */
#define FW_GRANULE_SHIFT 6       /* ... of 64 bytes */

enum { FW_EMPTY = 0, FW_OK = 1, FW_END = 2, FW_NO = 3, FW_NOCFI = 4 };
#define FW_CFA_RBP 1             /* how: the CFA is on rbp (else rsp) */
#define FW_RBP_SHIFT 1           /* how >> 1: cfi_rule.rbp_where */

struct fw_ent {
	uint64_t key;                /* the pc looked up (0: empty) */
	int32_t cfa_off;
	int16_t rbp_off;
	uint8_t kind;
	uint8_t how;
};
_Static_assert(sizeof(struct fw_ent) == 16, "fw_ent: two words");

/* A granule of code and the FDE that covered a pc in it: the search table's
 * binary search (18 probes in libtorch's, each a cache miss) skipped for
 * the other pcs of a function already seen. */
struct fw_fde {
	uint64_t key;                /* granule + 1 (0: empty) */
	uint64_t fde;
};

/*
 * The rules again, by where the frame is on the stack: slot (sp / 16) mod
 * 1024.  A deep stack's frames sit at the same stack pointers sample after
 * sample with the same pcs, and a walk goes up the stack, so it reads this
 * table in order, a few pages; the table by pc is one cache miss a frame
 * once the program's own work has evicted it (83 % of the walk's time in
 * perf annotate on a PyTorch loop, each miss 150-350 ns in this VM).
 * An entry is the rule for its key, the pc looked up, wherever it came
 * from: a slot whose key is not this frame's is simply a miss.
 */
#define FW_SP_BITS 10

/*
 * Per page of code: where in its module's search table the page's FDEs are
 * (cfi_near), and the row of the last rule read in it.  A new leaf pc
 * nearly every sample in a PyTorch loop falls in a granule not kept
 * (counted: 0.6 binary searches a sample in the steady loop; 16 times the
 * granules took a whole run's from 1.08 only to 0.91), but mostly in a
 * page already seen: in the row read there last (a function's body is
 * mostly one row), it takes that rule with no search, no FDE and no CFA
 * program; else the search reads a line or two of the table instead of
 * some 18 cold probes.  2048 pages: 8 MiB of code.
 */
#define FW_PAGE_BITS 11

struct fw_page {
	uint64_t key;                /* page + 1 (0: empty) */
	struct cfi_near near;
	uint16_t row_lo, row_hi;     /* the row, as offsets in the page (lo < hi: kept) */
	int32_t cfa_off;             /* its rule, as fw_ent's */
	int16_t rbp_off;
	uint8_t kind, how;
	uint32_t pad;
};
_Static_assert(sizeof(struct fw_page) == 32, "fw_page: half a line");

/*
 * The last sampled walk's stack pointers, leaf first: the next sample's
 * walk reads the table slots and stack words of mostly these frames, and
 * fastwalk_prefetch asks for all of them at once at its start.  Walked
 * frame by frame, each slot and each return address is a cache miss the
 * program's own work caused since the last sample (fw_step's two hottest
 * loads in perf annotate), and each waits for the one before.
 */
#define FW_TRAIL 64

struct fw_thread {
	struct fw_ent by_sp[1u << FW_SP_BITS];
	struct fw_ent rules[1u << FW_BITS];
	struct fw_fde fdes[1u << FW_FDE_BITS];
	struct fw_page pages[1u << FW_PAGE_BITS];
	uint64_t trail[FW_TRAIL];
	uint32_t ntrail;
	/* the Python walk's own trail (fastwalk_aux) */
	_Alignas(64) unsigned char aux[FASTWALK_AUX_BYTES];
};

#define FW_BYTES ((sizeof(struct fw_thread) + 4095) & ~(size_t)4095)

static int fw_on = 1;

void fastwalk_config(void)
{
	const char *s = agent_getenv(CBN_ENV_FAST_UNWIND);

	fw_on = !(s && strcmp(s, "0") == 0);
}

static inline uint32_t fw_rule_slot(uint64_t pc)
{
	return (uint32_t)((pc * 0x9e3779b97f4a7c15ull) >> (64 - FW_BITS));
}

static inline uint32_t fw_sp_slot(uint64_t sp)
{
	return (uint32_t)((sp >> 4) & ((1u << FW_SP_BITS) - 1));
}

/* SIGNAL-SAFE, between unwind_begin and unwind_end.  A prefetch never
 * faults; the stack's are asked only inside the live stack all the same. */
void fastwalk_prefetch(uint64_t pc)
{
	const struct agent_thread *t = &agent_tls;
	const struct fw_thread *w = t->fw_rules;
	uint32_t i, n;

	if (!fw_on || !w)
		return;
	__builtin_prefetch(&w->rules[fw_rule_slot(pc)]);
	n = w->ntrail < FW_TRAIL ? w->ntrail : FW_TRAIL;
	for (i = 0; i < n; i++) {
		uint64_t s = w->trail[i];

		__builtin_prefetch(&w->by_sp[fw_sp_slot(s)]);
		/* the frame below's return address and saved rbp, at s - 8
		 * and (mostly) s - 16 */
		if (i && s - 16 >= t->live_lo && s < t->live_hi) {
			__builtin_prefetch((const void *)(uintptr_t)(s - 8));
			__builtin_prefetch((const void *)(uintptr_t)(s - 16));
		}
	}
}

/* SIGNAL-SAFE.  The thread's tables, mapped at its first use. */
static struct fw_thread *fw_thread_get(struct agent_thread *t)
{
	long r;

	if (t->fw_rules)
		return t->fw_rules;
	if (t->sandboxed)
		return NULL;
	r = agent_syscall6(SYS_mmap, 0, (long)FW_BYTES, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if ((unsigned long)r > -4096UL)
		return NULL;
	t->fw_rules = (void *)r;
	return t->fw_rules;
}

void *fastwalk_aux(int map)
{
	struct agent_thread *t = &agent_tls;
	struct fw_thread *w = map ? fw_thread_get(t) : t->fw_rules;

	return w ? w->aux : NULL;
}

void fastwalk_flush(void)
{
	void *p = agent_tls.fw_rules;

	/* Zero pages again (a private anonymous mapping reads as zeros after
	 * MADV_DONTNEED): one system call, and no page touched that the
	 * tables did not use; by hand where the thread makes none. */
	if (p && (agent_tls.sandboxed ||
		  agent_syscall6(SYS_madvise, (long)p, (long)FW_BYTES, MADV_DONTNEED, 0, 0, 0) != 0))
		memset(p, 0, sizeof(struct fw_thread));
}

void fastwalk_thread_end(void)
{
	void *p = agent_tls.fw_rules;

	agent_tls.fw_rules = NULL;
	if (p)
		agent_syscall6(SYS_munmap, (long)p, (long)FW_BYTES, 0, 0, 0, 0);
}

static inline struct fw_page *fw_page_of(struct fw_thread *w, uint64_t target)
{
	uint64_t pk = (target >> 12) + 1;

	return &w->pages[(pk * 0x9e3779b97f4a7c15ull) >> (64 - FW_PAGE_BITS)];
}

/* SIGNAL-SAFE.  The rule for target from the module's tables, through the
 * FDE kept for its granule when that FDE covers it; *lo, *hi: its row
 * (on CFI_OK and CFI_END). */
static int fw_read(struct fw_thread *w, uint64_t target, uintptr_t hdr,
		   const struct cfi_span *sp, struct cfi_rule *r, uint64_t *lo, uint64_t *hi)
{
	uint64_t gk = (target >> FW_GRANULE_SHIFT) + 1;
	struct fw_fde *g = &w->fdes[(gk * 0x9e3779b97f4a7c15ull) >> (64 - FW_FDE_BITS)];
	uintptr_t fde;
	int k;

	if (g->key == gk) {
		k = cfi_rule_row((uintptr_t)g->fde, sp, (uintptr_t)target, r, lo, hi);
		if (k != CFI_NONE)
			return k;
	}
	{
		uint64_t pk = (target >> 12) + 1;
		struct fw_page *p = fw_page_of(w, target);
		struct cfi_near near = {0, 0};
		uintptr_t pg = (uintptr_t)target & ~(uintptr_t)4095;

		if (p->key == pk)
			near = p->near;
		k = cfi_find_near(hdr, sp, (uintptr_t)target, pg, pg + 4096, &near, &fde);
		if (k != CFI_OK)
			return k;
		if (p->key != pk) {
			p->key = pk;
			p->row_lo = p->row_hi = 0;
		}
		p->near = near;
	}
	g->key = gk;
	g->fde = fde;
	return cfi_rule_row(fde, sp, (uintptr_t)target, r, lo, hi);
}

/* SIGNAL-SAFE.  Keep e's rule, read for target, as its page's row
 * [lo, hi) (the part in target's page). */
static void fw_keep_row(struct fw_thread *w, uint64_t target, const struct fw_ent *e, uint64_t lo,
			uint64_t hi)
{
	struct fw_page *p = fw_page_of(w, target);
	uint64_t pg = target & ~(uint64_t)4095, pk = (target >> 12) + 1;

	if (lo > target || hi <= target)
		return;
	if (p->key != pk) {
		p->key = pk;
		p->near.lo = p->near.hi = 0;
	}
	p->row_lo = (uint16_t)(lo > pg ? lo - pg : 0);
	p->row_hi = (uint16_t)(hi - pg < 4096 ? hi - pg : 4096);
	p->cfa_off = e->cfa_off;
	p->rbp_off = e->rbp_off;
	p->kind = e->kind;
	p->how = e->how;
}

/* SIGNAL-SAFE.  The rule for target, from the table or the module's
 * tables; NULL when no module's code holds target (not kept: a library
 * loaded later may hold it). */
static const struct fw_ent *fw_rule(struct fw_thread *w, uint64_t target)
{
	struct fw_ent *e = &w->rules[fw_rule_slot(target)];
	struct cfi_rule r = {0};
	struct cfi_span sp;
	uintptr_t hdr;
	uint64_t lo = 0, hi = 0;
	int k;

	if (e->key == target)
		return e;
	{
		/* the row read last in target's page holds it: its rule, with
		 * no module, no search and no CFA program (the page's module
		 * stays until an unload empties these tables) */
		const struct fw_page *p = fw_page_of(w, target);
		uint64_t off = target & 4095;

		if (p->key == (target >> 12) + 1 && off >= p->row_lo && off < p->row_hi) {
			e->key = target;
			e->cfa_off = p->cfa_off;
			e->rbp_off = p->rbp_off;
			e->kind = p->kind;
			e->how = p->how;
			return e;
		}
	}
	if (modules_snap_cfi((uintptr_t)target, &hdr, &sp.lo, &sp.hi) < 0)
		return NULL;
	k = fw_read(w, target, hdr, &sp, &r, &lo, &hi);
	e->key = target;
	e->cfa_off = r.cfa_off;
	e->rbp_off = (int16_t)r.rbp_off;
	e->how = (uint8_t)((r.cfa_reg == CFI_REG_RBP ? FW_CFA_RBP : 0) |
			   r.rbp_where << FW_RBP_SHIFT);
	if (k == CFI_OK && r.rbp_off == (int32_t)e->rbp_off)
		e->kind = FW_OK;
	else if (k == CFI_END)
		e->kind = FW_END;
	else if (k == CFI_NONE)
		e->kind = FW_NOCFI;
	else
		e->kind = FW_NO;
	if (e->kind == FW_OK || e->kind == FW_END)
		fw_keep_row(w, target, e, lo, hi);
	return e;
}

/* SIGNAL-SAFE.  A word of the stack: from the cursor's copy where it has
 * one (a kernel entry's stack, as the kernel copied it), else of the
 * thread's live stack (unwind_begin's span). */
static inline int fw_word(const struct agent_thread *t, const struct fastwalk_cursor *c,
			  uint64_t addr, uint64_t *v)
{
	if (addr & 7)
		return -1;
	if (c->copy && addr >= c->copy_lo && addr < c->copy_hi && c->copy_hi - addr >= 8) {
		memcpy(v, c->copy + (addr - c->copy_lo), 8);
		return 0;
	}
	if (addr < t->live_lo || addr >= t->live_hi || t->live_hi - addr < 8)
		return -1;
	*v = *(const uint64_t *)(uintptr_t)addr;
	return 0;
}

/*
 * SIGNAL-SAFE.  One frame up from c: 1 and c is its caller; 0 when c's
 * frame is the stack's end (its return address undefined or zero); -1
 * when the walk cannot follow, -2 when c's code has no CFI (JIT code, or a
 * module's code without an FDE): c is then left as it was.
 */
static int fw_step(struct fw_thread *w, const struct agent_thread *t, struct fastwalk_cursor *c)
{
	uint64_t target = c->exact ? c->pc : c->pc - 1, cfa, ra, bp = c->bp;
	struct fw_ent *s = &w->by_sp[fw_sp_slot(c->sp)];
	const struct fw_ent *e;
	int bp_ok = c->bp_ok;

	if (s->key == target) {
		e = s;
	} else {
		e = fw_rule(w, target);
		if (!e)
			return FASTWALK_NOCFI; /* in no module: JIT code */
		*s = *e;
	}
	if (e->kind == FW_NO)
		return -1;
	if (e->kind == FW_NOCFI)
		return FASTWALK_NOCFI;
	if (e->kind == FW_END)
		return 0;
	if (e->how & FW_CFA_RBP) {
		if (!bp_ok)
			return -1;
		cfa = bp + (uint64_t)(int64_t)e->cfa_off;
	} else {
		cfa = c->sp + (uint64_t)(int64_t)e->cfa_off;
	}
	if (fw_word(t, c, cfa - 8, &ra) < 0)
		return -1;
	switch (e->how >> FW_RBP_SHIFT) {
	case CFI_RBP_SAVED:
		if (fw_word(t, c, cfa + (uint64_t)(int64_t)e->rbp_off, &bp) < 0)
			return -1;
		bp_ok = 1;
		break;
	case CFI_RBP_LOST:
		bp_ok = 0;
		break;
	default:
		break;
	}
	if (!ra)
		return 0; /* where libunwind's cursor stops too */
	c->pc = ra;
	c->sp = cfa;
	c->bp = bp;
	c->bp_ok = bp_ok;
	c->exact = 0;
	return 1;
}

int fastwalk_step(struct fastwalk_cursor *c)
{
	struct agent_thread *t = &agent_tls;
	struct fw_thread *w;

	if (!fw_on || !t->live_hi || !(w = fw_thread_get(t)))
		return -1;
	return fw_step(w, t, c);
}

static int fw_walk(uint64_t pc, uint64_t sp, uint64_t bp, uint64_t *pcs, int max, int *flags,
		   struct fastwalk_cursor *stop, int trail);

int fastwalk_stack(const ucontext_t *uc, uint64_t *pcs, int max, int *flags,
		   struct fastwalk_cursor *stop)
{
	return fw_walk((uint64_t)uc->uc_mcontext.gregs[REG_RIP],
		       (uint64_t)uc->uc_mcontext.gregs[REG_RSP],
		       (uint64_t)uc->uc_mcontext.gregs[REG_RBP], pcs, max, flags, stop, 1);
}

int fastwalk_regs(uint64_t pc, uint64_t sp, uint64_t bp, uint64_t *pcs, int max, int *flags,
		  struct fastwalk_cursor *stop)
{
	return fw_walk(pc, sp, bp, pcs, max, flags, stop, 0);
}

/* trail: keep the frames' stack pointers for the next sample's prefetch
 * (the sampler's walks only: a stack taken in an allocation hook stands
 * elsewhere). */
static int fw_walk(uint64_t pc, uint64_t sp, uint64_t bp, uint64_t *pcs, int max, int *flags,
		   struct fastwalk_cursor *stop, int trail)
{
	struct agent_thread *t = &agent_tls;
	struct fastwalk_cursor c = {pc, sp, bp, 1, 1, NULL, 0, 0};
	struct fw_thread *w;
	int n = 0, k;

	if (stop)
		stop->exact = -1; /* not stopped */
	if (!fw_on || !t->live_hi || max < 1 || !(w = fw_thread_get(t)))
		return -1;
	if (trail)
		w->ntrail = 0;
	for (;;) {
		if (n == max) {
			*flags |= CBN_SAMPLE_TRUNCATED;
			return n;
		}
		if (trail && n < FW_TRAIL)
			w->trail[w->ntrail++] = c.sp;
		pcs[n++] = c.pc;
		k = fw_step(w, t, &c);
		if (k == FASTWALK_NOCFI && stop) {
			*stop = c;
			return n;
		}
		if (k <= 0)
			return k < 0 ? -1 : n;
	}
}
