/*
 * cuda_report.h — the CUDA part of the text and JSON reports: autograd-style
 * table, kernel summary, copies and sets, launch sites, overview and
 * recommendations.  Both print/return nothing when the profile has no CUDA data
 * and no CUDA status.  Launcher side only.
 */
#ifndef CBN_CUDA_REPORT_H
#define CBN_CUDA_REPORT_H

#include <stdio.h>

#include "profile.h"
#include "report.h"

struct cJSON;
struct analysis;
struct cuda_analysis;
struct cuda_op_row;

int report_cuda_text(FILE *out, const struct analysis *a, const struct report_opts *o);
/* The "cuda" object of the JSON report; NULL when there is nothing to say. */
struct cJSON *report_cuda_json(const struct analysis *a, const struct report_opts *o);

/* A copy of a's op rows in --sort key's order (cuda_sort_ops), so that the
 * analysis itself is never reordered.  Returns the key used and *ops (free
 * it), or NULL when memory ran short. */
const char *report_cuda_sorted_ops(const struct cuda_analysis *a, const char *key,
				   struct cuda_op_row **ops);

#endif
