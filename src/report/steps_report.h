/*
 * steps_report.h — the steps part of the text report (steps_text.c): what the
 * capture controls let through, the table of steps, their distribution, the
 * slowest steps with what grew, the step recommendations.  Prints nothing for
 * a run without steps.  Launcher side only.
 */
#ifndef CBN_STEPS_REPORT_H
#define CBN_STEPS_REPORT_H

#include <stdio.h>

#include "report.h"

struct analysis;

int report_steps_text(FILE *out, const struct analysis *a, const struct report_opts *o);
/* One line after prefix when the run used capture controls: the windows, the
 * time inside them, the controls.  Nothing otherwise.  For the report header. */
void report_steps_captured(FILE *out, const struct profile *p, const char *prefix);

#endif
