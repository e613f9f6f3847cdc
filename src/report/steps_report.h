/*
 * steps_report.h — the steps part of the text report (steps_text.c): what the
 * capture controls let through, the table of steps, their distribution, the
 * slowest steps with what grew, the step recommendations.  Prints nothing for
 * a run without steps and without controls.  Launcher side only.
 */
#ifndef CBN_STEPS_REPORT_H
#define CBN_STEPS_REPORT_H

#include <stdio.h>

#include "report.h"

struct analysis;

int report_steps_text(FILE *out, const struct analysis *a, const struct report_opts *o);

#endif
