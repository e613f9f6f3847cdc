/*
 * ops_report.h — the operator table (analysis/ops/ops.h) in the text report and
 * the JSON report's "operators" object.  Both print/return nothing when no
 * frame entered an operator.  Launcher side only.
 */
#ifndef CBN_OPS_REPORT_H
#define CBN_OPS_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "report.h"

struct analysis;
struct cJSON;
struct op_analysis;
struct op_row;

int report_ops_text(FILE *out, const struct analysis *a, const struct report_opts *o);
/* Add the "operators" object to root.  Returns 0, or -ENOMEM. */
int report_ops_json(const struct analysis *a, const struct report_opts *o, struct cJSON *root);

/* The name a frame of function func shows in flame graphs and folded
 * stacks: the operator it enters ("aten::addmm"), else name. */
const char *report_frame_name(const struct op_analysis *ops, uint32_t func, const char *name);

/* A copy of the rows in --sort key's order (ops_sort), so the analysis is
 * never reordered.  Returns the key used and *rows (free it), or NULL when
 * memory ran short. */
const char *report_ops_sorted(const struct op_analysis *ops, const char *key,
			      struct op_row **rows);

#endif
