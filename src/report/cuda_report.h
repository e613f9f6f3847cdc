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

int report_cuda_text(FILE *out, const struct profile *p, const struct report_opts *o);
/* The "cuda" object of the JSON report; NULL when there is nothing to say. */
struct cJSON *report_cuda_json(const struct profile *p, const struct report_opts *o);

#endif
