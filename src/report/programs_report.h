/*
 * programs_report.h — the run's CPU by program and module (programs.h) in
 * the text report (programs_text.c: shown when the run has more than one
 * program) and the JSON report (programs_json.c: "programs", every run with
 * samples).  Launcher side only.
 */
#ifndef CBN_PROGRAMS_REPORT_H
#define CBN_PROGRAMS_REPORT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "report.h"

struct analysis;

int report_programs_text(FILE *out, const struct analysis *a, const struct report_opts *o);
/* Adds "programs" to root (nothing without samples).  0, or -ENOMEM. */
int report_programs_json(const struct analysis *a, cJSON *root);

#endif
