/*
 * span.h — the one rule for what stretch of a run its figures cover: the
 * capture windows when capture controls were used (--schedule, --delay,
 * --duration, --capture-range, ctl, the toggle signal: only they were
 * recorded), else each process's whole life.  Every share of "the run" (the
 * CPU overview, parallel efficiency, the verdicts, the sync share, memory
 * peaks) divides by this span, not by the wall time of the whole run.
 * Launcher side only.
 */
#ifndef CBN_SPAN_H
#define CBN_SPAN_H

#include <stdint.h>

#include "profile.h"

struct run_span {
	int windowed;            /* 1: some process recorded only inside capture windows */
	uint32_t windows;        /* windows of the controlled processes */
	uint64_t ns;             /* the union over processes of their windows (a process
				  * without controls: its life); the run's wall when
				  * nothing is windowed */
	uint64_t start, end;     /* the first window's start, the last one's end */
};

void span_of_run(const struct profile *p, struct run_span *s);
/* ns of [s, e) that some process recorded (e - s when nothing is windowed):
 * the GPU window's time that was watched. */
uint64_t span_between(const struct profile *p, uint64_t s, uint64_t e);
/* ns of [s, e) that process pi recorded: inside its windows, or all of it
 * for a process without capture controls. */
uint64_t span_in_process(const struct profile *p, uint32_t pi, uint64_t s, uint64_t e);

#endif
