/*
 * calltree.h — the merged call tree of the CPU samples (every stack from the
 * root down, the same frames merged), built once by analysis_run for the
 * writers that draw or bound it: the HTML page's flame graph and timeline
 * (html_data.c) and the --json report's "call_tree" (calltree_json.c).
 * Launcher side only.
 */
#ifndef CBN_CALLTREE_H
#define CBN_CALLTREE_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "util.h"

/* Pseudo functions of the tree, above any real index. */
#define CT_TRUNC (UINT32_MAX - 1)    /* stacks cut at max depth */
#define CT_UNKNOWN (UINT32_MAX - 2)  /* a frame without a valid function */

struct ct_node {
	uint32_t func, parent, inlined;  /* node 0 is the root: func, parent UINT32_MAX */
	uint64_t total, self;            /* ns */
};

struct ct_tree {
	struct ct_node *n;               /* parents before their children */
	size_t len, cap;
	struct util_map index;           /* (parent, func, inlined) -> node */
	/* Weight slots: one per (stack, truncated) pair, 2 * stack (+1 when
	 * truncated); slot 2 * nstacks (+1) holds samples without a valid
	 * stack.  nslots = 2 * (nstacks + 1). */
	size_t nslots;
	uint64_t *weight;                /* ns of the samples of each slot */
	uint32_t *leaf;                  /* the node each slot's stack ends at (0, the
					  * root, for a slot of no weight) */
};

/* The tree of p's CPU samples into *t.  0, or -ENOMEM with *t empty. */
int ct_analyze(const struct profile *p, struct ct_tree *t);
void ct_free(struct ct_tree *t);

#endif
