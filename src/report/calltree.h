/*
 * calltree.h — the merged call tree of the CPU samples (every stack from the
 * root down, the same frames merged), built once for the HTML page's flame
 * graph (html_data.c) and the --json report's bounded "call_tree" (the
 * differential flame graph of `compare --html` reads it from two reports).
 * Launcher side only; docs/outputs.md.
 */
#ifndef CBN_CALLTREE_H
#define CBN_CALLTREE_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct analysis;
struct profile;
struct cJSON;

/* Pseudo functions of the tree, above any real index. */
#define CT_TRUNC (UINT32_MAX - 1)    /* stacks cut at max depth */
#define CT_UNKNOWN (UINT32_MAX - 2)  /* a frame without a valid function */

/* The bounds of the JSON "call_tree": nodes of at least CT_MIN_SHARE of the
 * root's total, the CT_MAX_NODES heaviest of them. */
#define CT_MIN_SHARE 0.001
#define CT_MAX_NODES 1000

struct ct_node {
	uint32_t func, parent, inlined;  /* node 0 is the root: func, parent UINT32_MAX */
	uint64_t total, self;            /* ns */
};

struct ct_tree {
	struct ct_node *n;               /* parents before their children */
	size_t len, cap;
	struct util_map index;           /* (parent, func, inlined) -> node */
};

/* ns of every (stack, truncated) pair: slot 2 * nstacks (+1) holds samples
 * without a valid stack.  NULL on OOM; free() it. */
uint64_t *ct_stack_weights(const struct profile *p);

/* Build the tree from the weights above; leaf, when not NULL, gets for each
 * weight slot the node its stack ends at (2 * (nstacks + 1) entries: 0, the
 * root, for a slot of no weight).  0, or -ENOMEM (ct_free it then). */
int ct_build(const struct profile *p, const uint64_t *w, struct ct_tree *t, uint32_t *leaf);
void ct_free(struct ct_tree *t);

/* The --json report's "call_tree" (bounded as above); NULL on OOM. */
struct cJSON *report_calltree_json(const struct analysis *a);

#endif
