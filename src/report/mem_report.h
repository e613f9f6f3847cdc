/*
 * mem_report.h — the memory part of the text report (mem_text.c): per host
 * process and per GPU a summary and the peak view, the allocation-sites and
 * leaks tables, and the memory recommendations.  Prints nothing when the run
 * recorded no memory.  Launcher side only.
 */
#ifndef CBN_MEM_REPORT_H
#define CBN_MEM_REPORT_H

#include <stdio.h>

#include "report.h"

struct analysis;

int report_mem_text(FILE *out, const struct analysis *a, const struct report_opts *o);

#endif
