/*
 * calltree_json.h — the --json report's bounded "call_tree", from the
 * analysis' call tree (analysis/cpu/calltree.h); the differential flame graph of
 * `compare --html` reads it from two reports.  Launcher side only;
 * docs/outputs.md.
 */
#ifndef CBN_CALLTREE_JSON_H
#define CBN_CALLTREE_JSON_H

struct analysis;
struct cJSON;

/* The bounds of the JSON "call_tree": nodes of at least CT_MIN_SHARE of the
 * root's total, the CT_MAX_NODES heaviest of them. */
#define CT_MIN_SHARE 0.001
#define CT_MAX_NODES 1000

/* The --json report's "call_tree" (bounded as above); NULL on OOM. */
struct cJSON *report_calltree_json(const struct analysis *a);

#endif
