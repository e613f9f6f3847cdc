/*
 * wait_report.h — the writers of the CPU waiting view (analysis/wait/wait.h): the
 * text report's "CPU overview" and off-CPU tables (wait_text.c), the header's
 * "Off-CPU:" line, and the JSON report's "waiting" object (wait_json.c).
 * Each prints or adds nothing when the run has no wait analysis.  Launcher
 * side only.
 */
#ifndef CBN_WAIT_REPORT_H
#define CBN_WAIT_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "report.h"

struct analysis;
struct cJSON;
struct wait_analysis;

/* CPU overview, verdict, recommendations; with off-CPU data also where the
 * threads waited, lock contention, the threads on and off the CPU and the
 * wall-clock functions.  0, or -ENOMEM. */
int report_wait_text(FILE *out, const struct analysis *a, const struct report_opts *o);

/* One header line after prefix saying what the off-CPU sampler did (rate,
 * ticks, stretches, what was unconfirmed or lost) or why it refused; nothing
 * when it was not asked for. */
void report_wait_header(FILE *out, const struct profile *p, const char *prefix, int verbose);

/* Add "waiting" to root when a->wait is set; nothing otherwise.  0 or
 * -ENOMEM. */
int report_wait_json(const struct analysis *a, struct cJSON *root);

/* "off-CPU futex: pthread_mutex_lock": what a trace slice or a flame graph
 * frame of an off-CPU stretch is called (call: the blocking function's
 * name, NULL or "" when unknown).  Returns buf. */
char *wait_offcpu_label(char *buf, size_t len, uint32_t kind, const char *call);

/* The frame an off-CPU stack ends in: "[off-CPU: futex]". */
const char *wait_offcpu_frame(uint32_t kind);

#endif
