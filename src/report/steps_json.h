/*
 * steps_json.h — the JSON report's "steps" object (steps_json.c): the steps
 * view (analysis/steps/steps.h) of a run whose main loop was cut into steps, with
 * the capture windows it was recorded in.  Launcher side only.
 */
#ifndef CBN_STEPS_JSON_H
#define CBN_STEPS_JSON_H

#include <stdint.h>

struct analysis;
struct cJSON;

/* Add "steps" to root when a->steps is set; nothing otherwise.  0 or
 * -ENOMEM. */
int report_steps_json(const struct analysis *a, struct cJSON *root);

/* The public name of an enum cbn_capture_cause ("schedule", "cudaProfilerApi"),
 * "unknown" for a value this build does not know.  Shared with the trace. */
const char *steps_cause_name(uint32_t cause);

#endif
