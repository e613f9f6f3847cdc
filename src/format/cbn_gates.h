/*
 * cbn_gates.h — the capture gates of a process image (docs/steps.md), kept in
 * its session file's header and changed from two sides: the agent (the
 * schedule at cbn_step(), capture ranges, cbn_start/cbn_stop) and the
 * launcher (--delay, --duration, `cbottleneck ctl`, the toggle signal).
 * Every change is one compare-and-swap on header.capture_gates, whose low
 * 32 bits hold a bit per closed gate; the side whose change opens or closes
 * the window (all bits clear <-> some set) writes the CAPTURE record, with
 * the time it read between its load and its successful CAS: so the records
 * of both sides come in the order of the changes.  Header-only,
 * async-signal-safe (atomics and the vDSO clock).
 */
#ifndef CBN_GATES_H
#define CBN_GATES_H

#include <stdatomic.h>
#include <stdint.h>

#include "cbn_format.h"
#include "cbn_time.h"

#define CBN_GATE_TIME 0x1u               /* --delay, --duration (the launcher) */
#define CBN_GATE_SCHED 0x2u              /* --schedule (the agent, at cbn_step()) */
#define CBN_GATE_RANGE 0x4u              /* --capture-range (the agent) */
#define CBN_GATE_MANUAL 0x8u             /* ctl, the toggle signal (the launcher); cbn_start/stop */
#define CBN_GATES_MASK 0xffffffffull

/* 1 while h's window is open (always without controls). */
static inline int cbn_gates_open(const struct cbn_file_header *h)
{
	return !(atomic_load_explicit(&((struct cbn_file_header *)h)->capture_gates,
				      memory_order_relaxed) &
		 CBN_GATES_MASK);
}

/*
 * Open (open = 1) or close the gates in bits.  Returns 1 when this change
 * opened the window, -1 when it closed it, 0 otherwise; *ts is when (for the
 * CAPTURE record the caller then writes).  The header's window accounting
 * (windows, active, active_ns, capture_opened_ns, capture_first_ns) is
 * updated by the side that made the edge.
 */
static inline int cbn_gates_set(struct cbn_file_header *h, uint32_t bits, int open, uint64_t *ts)
{
	uint64_t old = atomic_load(&h->capture_gates), nw, opened;

	do {
		*ts = cbn_clock_ns(CLOCK_MONOTONIC);
		nw = open ? old & ~(uint64_t)bits : old | bits;
		if (nw == old)
			return 0;
	} while (!atomic_compare_exchange_weak(&h->capture_gates, &old, nw));
	if ((old & CBN_GATES_MASK) && !(nw & CBN_GATES_MASK)) {
		uint64_t zero = 0;

		atomic_store(&h->capture_opened_ns, *ts);
		atomic_compare_exchange_strong(&h->capture_first_ns, &zero, *ts);
		atomic_fetch_add(&h->capture.windows, 1);
		atomic_store(&h->capture.active, 1);
		return 1;
	}
	if (!(old & CBN_GATES_MASK) && (nw & CBN_GATES_MASK)) {
		opened = atomic_load(&h->capture_opened_ns);
		if (opened && *ts > opened)
			atomic_fetch_add(&h->capture.active_ns, *ts - opened);
		atomic_store(&h->capture.active, 0);
		return -1;
	}
	return 0;
}

#endif
