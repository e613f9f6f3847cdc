/*
 * ranges.h — user annotations (ranges.c: cbn_range_push/pop, cbn_step,
 * cbn_mark) and the RANGE writer NVTX uses.  Normal context.
 */
#ifndef CBN_AGENT_RANGES_H
#define CBN_AGENT_RANGES_H

#include <stdint.h>

#include "agent.h"

/* The calling thread ends: its stack of open ranges goes. */
void ranges_thread_end(void) AGENT_HIDDEN;
/* One RANGE record; 0, or -1 without a session or room. */
int ranges_write(uint16_t kind, uint16_t source, uint64_t start, uint64_t end, uint32_t tid,
		 uint32_t depth, const char *domain, const char *name) AGENT_HIDDEN;

#endif
