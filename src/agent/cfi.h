/*
 * cfi.h — one pc's frame rule from a module's .eh_frame_hdr and .eh_frame
 * (cfi.c), for the handler's own walk (fastwalk.c): where the caller's
 * frame (CFA), return address and rbp are, when they are what x86-64 code
 * compiled with CFI says nearly everywhere.  Anything else (an expression,
 * a CFA on another register, a signal frame) is refused: the caller then
 * unwinds with libunwind, which knows every case.  Pure: it reads only the
 * memory it is given, each read checked against its bounds.
 */
#ifndef CBN_AGENT_CFI_H
#define CBN_AGENT_CFI_H

#include <stdint.h>

#include "agent.h"

/* A readable span of a loaded module: every byte the lookup reads lies in
 * it (.eh_frame_hdr, .eh_frame). */
struct cfi_span {
	uintptr_t lo, hi;
};

enum cfi_kind {
	CFI_OK = 0,         /* the rule below */
	CFI_END = 1,        /* the return address is undefined: the stack's outermost frame */
	CFI_NONE = -1,      /* no FDE covers the pc (or no usable .eh_frame_hdr) */
	CFI_COMPLEX = -2,   /* an FDE, with rules this reader does not follow */
	CFI_BAD = -3,       /* malformed or out of bounds */
};

#define CFI_REG_RBP 6
#define CFI_REG_RSP 7

/* rbp_where: the caller's rbp is ... */
#define CFI_RBP_SAME 0      /* this frame's rbp (not saved by it) */
#define CFI_RBP_SAVED 1     /* the word at CFA + rbp_off */
#define CFI_RBP_LOST 2      /* unknown (undefined) */

struct cfi_rule {
	uint8_t kind;       /* CFI_OK or CFI_END (as uint8_t) */
	uint8_t cfa_reg;    /* CFI_REG_RSP or CFI_REG_RBP */
	uint8_t rbp_where;
	uint8_t pad;
	int32_t cfa_off;    /* CFA = cfa_reg + cfa_off */
	int32_t rbp_off;
	/* the return address is always the word at CFA - 8 (checked) */
};

/*
 * SIGNAL-SAFE (pure).  The rule for target, a pc inside the code: the
 * interrupted pc itself, or a return address less one.  hdr: the module's
 * .eh_frame_hdr; span: the module's readable memory around it.  Returns a
 * cfi_kind; *out is filled on CFI_OK and CFI_END.
 */
int cfi_lookup(uintptr_t hdr, const struct cfi_span *span, uintptr_t target, struct cfi_rule *out)
	AGENT_HIDDEN;
/* SIGNAL-SAFE (pure).  cfi_lookup in its two halves: the FDE that the
 * search table gives for target (its length field; CFI_OK, CFI_NONE or
 * CFI_BAD), the search being most of a lookup's cost; and the rule from an
 * FDE (CFI_NONE when target lies outside the FDE's range: a kept FDE tried
 * for a nearby pc). */
int cfi_find(uintptr_t hdr, const struct cfi_span *span, uintptr_t target, uintptr_t *fde)
	AGENT_HIDDEN;
int cfi_rule_at(uintptr_t fde, const struct cfi_span *span, uintptr_t target,
		struct cfi_rule *out) AGENT_HIDDEN;
/* SIGNAL-SAFE (pure).  cfi_rule_at, and the row of the FDE's table that
 * holds target, [*row_lo, *row_hi): every pc in it has the same rule
 * (set when the answer is CFI_OK or CFI_END). */
int cfi_rule_row(uintptr_t fde, const struct cfi_span *span, uintptr_t target,
		 struct cfi_rule *out, uint64_t *row_lo, uint64_t *row_hi) AGENT_HIDDEN;

/*
 * SIGNAL-SAFE (pure).  cfi_find with a hint: near, entries [lo, hi) of the
 * search table, is searched alone when it brackets target (entry lo's code
 * starts at or below target, entry hi's above it, checked against the table
 * itself, so any near gives cfi_find's answer).  Otherwise the whole table
 * is searched, and *near set to the entries of the code in [pg_lo, pg_hi)
 * (target's page), at most CFI_NEAR_SCAN on either side of target's, for
 * the next lookup there.  A page's few entries lie in a line or two, where
 * the whole table's search is some 18 probes, each a cache miss in a large
 * library's table once the program's work evicted it.
 */
#define CFI_NEAR_SCAN 64
struct cfi_near {
	uint32_t lo, hi;
};
int cfi_find_near(uintptr_t hdr, const struct cfi_span *span, uintptr_t target, uintptr_t pg_lo,
		  uintptr_t pg_hi, struct cfi_near *near, uintptr_t *fde) AGENT_HIDDEN;

#endif
