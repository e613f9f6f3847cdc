/*
 * mon_capture.c — the capture gates the launcher turns (docs/steps.md), in
 * each image's header (cbn_gates.h), so that no thread in the program has to
 * keep a clock or wait for a command:
 *
 *   time    --delay: opens at the image's start + delay; --duration: closes
 *           at its first window's opening + duration (the opening may be the
 *           program's, a schedule's say: it is read from the header)
 *   manual  the toggle signal (the program's handler only counts it in the
 *           header: each one flips the gate), `cbottleneck ctl` (mon_ctl.c)
 *
 * An edge this side makes is recorded in the side file (CAPTURE, the time
 * read between its load and its CAS, so in order with the agent's records).
 * The samplers see the gates at their next signal; the CUDA layer's flusher
 * polls them.
 */
#include <string.h>

#include "cbn_gates.h"
#include "mon_int.h"

void mon_capture_record(struct mon_image *im, uint64_t ts, int event, int cause, const char *name)
{
	struct {
		struct cbn_rec_capture r;
		char name[128];
	} rec;
	size_t n = name ? strnlen(name, sizeof(rec.name) - 1) : 0;
	struct writer *w = mon_side(im);

	if (!w)
		return;
	memset(&rec, 0, sizeof(rec));
	rec.r.h.type = CBN_REC_CAPTURE;
	rec.r.ts = ts;
	rec.r.step = atomic_load(&im->hdr->capture.steps);
	rec.r.event = (uint16_t)event;
	rec.r.cause = (uint16_t)cause;
	rec.r.name_len = (uint32_t)n;
	if (n)
		memcpy(rec.name, name, n);
	rec.r.h.size = (uint32_t)CBN_REC_ALIGN(sizeof(rec.r) + n + 1);
	writer_append_event(w, &rec, rec.r.h.size);
}

/* Open or close gate in the image; the edge it makes, if any, recorded.
 * Returns 1 when the image records now. */
int mon_capture_gate(struct mon_image *im, uint32_t gate, int open, int cause)
{
	uint64_t ts;
	int edge = cbn_gates_set(im->hdr, gate, open, &ts);

	if (edge)
		mon_capture_record(im, ts, edge > 0 ? CBN_CAPTURE_OPEN : CBN_CAPTURE_CLOSE, cause, NULL);
	return cbn_gates_open(im->hdr);
}

/* The gate ctl and the toggle signal turn: the range gate under
 * --capture-range api (they do what cbn_start/cbn_stop do), else the manual one. */
uint32_t mon_capture_manual(const struct mon *m)
{
	return m->o.range_api ? CBN_GATE_RANGE : CBN_GATE_MANUAL;
}

static uint64_t mon_capture_one(struct mon *m, struct mon_image *im, uint64_t now)
{
	struct cbn_file_header *h = im->hdr;
	uint64_t next = 0, first, at;
	uint32_t toggles;

	if (m->o.delay_ns && !im->time_state) {
		at = h->start_mono_ns + m->o.delay_ns;
		if (now >= at) {
			mon_capture_gate(im, CBN_GATE_TIME, 1, CBN_CAUSE_DELAY);
			im->time_state = 1;
		} else {
			next = at;
		}
	}
	if (m->o.duration_ns && im->time_state != 2) {
		first = atomic_load(&h->capture_first_ns);
		if (first && now >= first + m->o.duration_ns) {
			mon_capture_gate(im, CBN_GATE_TIME, 0, CBN_CAUSE_DURATION);
			im->time_state = 2; /* over for good */
		} else if (first && (!next || first + m->o.duration_ns < next)) {
			next = first + m->o.duration_ns;
		}
	}
	/* Each toggle signal flips the gate (two between looks: none). */
	toggles = atomic_load(&h->capture_toggles);
	if (toggles != im->toggles_seen) {
		uint32_t g = mon_capture_manual(m);

		if ((toggles - im->toggles_seen) & 1)
			mon_capture_gate(im, g, !!(atomic_load(&h->capture_gates) & g), CBN_CAUSE_SIGNAL);
		im->toggles_seen = toggles;
	}
	return next;
}

uint64_t mon_capture_turn(struct mon *m, uint64_t now)
{
	uint64_t next = 0, t;
	size_t i;

	if (!m->o.controlled)
		return 0;
	for (i = 0; i < m->nimg; i++) {
		struct mon_image *im = &m->img[i];

		if (im->ended || !im->hdr ||
		    atomic_load(&im->hdr->capture.mode) != CBN_CAPTURE_CONTROLLED)
			continue;
		t = mon_capture_one(m, im, now);
		if (t && (!next || t < next))
			next = t;
	}
	/* The toggle signal is seen within a few milliseconds. */
	if (m->o.toggle && (!next || now + 2000000 < next))
		next = now + 2000000;
	return next;
}
