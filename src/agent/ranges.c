/*
 * ranges.c — user annotations from include/cbottleneck.h (cbn_range_push/pop,
 * cbn_step, cbn_mark): a bounded per-thread stack of open ranges, one RANGE
 * record written when a range closes.  Also the RANGE writer NVTX uses.
 * Not signal context (the functions take the event lock and may malloc).
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "capture.h"
#include "floor.h"
#include "ranges.h"

#define RANGES_DEPTH 64
#define RANGES_NAME 128

struct range_stack {
	int depth;                       /* pushes not yet popped, including ignored ones */
	uint64_t ignored;                /* pushes deeper than RANGES_DEPTH */
	uint64_t start[RANGES_DEPTH];
	char name[RANGES_DEPTH][RANGES_NAME];
};

int ranges_write(uint16_t kind, uint16_t source, uint64_t start, uint64_t end, uint32_t tid,
		 uint32_t depth, const char *domain, const char *name)
{
	char buf[sizeof(struct cbn_rec_range) + 2 * 1024 + 8];
	struct cbn_rec_range *r = (struct cbn_rec_range *)buf;
	size_t dl = domain ? strnlen(domain, 1023) : 0;
	size_t nl = name ? strnlen(name, 1023) : 0;
	size_t size = CBN_REC_ALIGN(sizeof(*r) + dl + 1 + nl + 1);

	if (!agent.w.hdr)
		return -1;
	memset(buf, 0, size);
	r->h.type = CBN_REC_RANGE;
	r->h.size = (uint32_t)size;
	r->start = start;
	r->end = end;
	r->tid = tid;
	r->kind = kind;
	r->source = source;
	r->depth = depth;
	r->domain_len = (uint16_t)dl;
	r->name_len = (uint16_t)nl;
	if (dl)
		memcpy(r->strings, domain, dl);
	if (nl)
		memcpy(r->strings + dl + 1, name, nl);
	return agent_event(r, size);
}

static struct range_stack *ranges_get(void)
{
	struct agent_thread *t = &agent_tls;

	if (!t->ranges)
		t->ranges = agent_calloc(1, sizeof(*t->ranges));
	return t->ranges;
}

void ranges_thread_end(void)
{
	agent_free(agent_tls.ranges);
	agent_tls.ranges = NULL;
}

static uint32_t ranges_tid(void)
{
	return agent_tls.tid ? agent_tls.tid : agent_gettid();
}

/* Open a range on this thread.  Returns the nesting depth before the push, as
 * nvtxRangePush does, or -1 when the agent is inactive. */
__attribute__((visibility("default"))) int cbn_range_push(const char *name)
{
	struct range_stack *s;
	int d;

	if (!atomic_load(&agent.active) || !(s = ranges_get()))
		return -1;
	d = s->depth++;
	if (d >= RANGES_DEPTH) {
		s->ignored++;
		return d;
	}
	s->start[d] = agent_now();
	strncpy(s->name[d], name ? name : "", RANGES_NAME - 1);
	s->name[d][RANGES_NAME - 1] = 0;
	/* A range named as a step (--step) counts one at its push. */
	if (capture_is_step_name(s->name[d]))
		capture_step();
	return d;
}

/* Close the innermost range and record it.  Returns the depth it had, or -1
 * when no range was open. */
__attribute__((visibility("default"))) int cbn_range_pop(void)
{
	struct range_stack *s = agent_tls.ranges;
	int d;

	if (!s || s->depth <= 0 || !atomic_load(&agent.active))
		return -1;
	d = --s->depth;
	if (d < RANGES_DEPTH && capture_is_on())
		ranges_write(CBN_RANGE_PUSHPOP, CBN_SRC_ANNOTATION, s->start[d], agent_now(),
			     ranges_tid(), (uint32_t)d, "", s->name[d]);
	return d;
}

/* One step of the program's main loop (training step, frame, request). */
__attribute__((visibility("default"))) void cbn_step(void)
{
	uint64_t now;

	if (!atomic_load(&agent.active))
		return;
	now = agent_now();
	if (capture_step())
		ranges_write(CBN_RANGE_STEP, CBN_SRC_ANNOTATION, now, now, ranges_tid(), 0, "",
			     "step");
}

/* An instant event with a name. */
__attribute__((visibility("default"))) void cbn_mark(const char *name)
{
	uint64_t now;

	if (!atomic_load(&agent.active))
		return;
	now = agent_now();
	if (capture_is_step_name(name) ? capture_step() :
					 capture_is_on())
		ranges_write(CBN_RANGE_MARK, CBN_SRC_ANNOTATION, now, now, ranges_tid(), 0, "",
			     name ? name : "");
}
