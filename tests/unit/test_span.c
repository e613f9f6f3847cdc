/*
 * test_span.c — what the figures cover (analysis/common/span.c): without capture
 * controls the wall; with them the union of the controlled processes'
 * windows and the lives of the others; a process's recorded time inside a
 * stretch; and the recorded part of a stretch of the run (the GPU window's
 * watched time, which capture windows cut into pieces).
 */
#include <string.h>

#include "testlib.h"
#include "span.h"

#define MS 1000000ull

static struct prof_process procs[2];
static struct prof_window wins[3];

static void two_processes(struct profile *p, int controlled)
{
	memset(p, 0, sizeof(*p));
	memset(procs, 0, sizeof(procs));
	p->wall_ns = 1000 * MS;
	p->processes = procs;
	p->nprocesses = 2;
	procs[0].start = 0;
	procs[0].end = 1000 * MS;
	procs[1].start = 600 * MS;
	procs[1].end = 700 * MS;
	procs[0].capture.mode = controlled ? CBN_CAPTURE_CONTROLLED : CBN_CAPTURE_ALL;
	procs[1].capture.mode = CBN_CAPTURE_ALL;
	/* process 0 recorded [100, 200) and [500, 650) ms; process 1 (no
	 * controls) its life [600, 700) */
	wins[0] = (struct prof_window){.start = 100 * MS, .end = 200 * MS, .process = 0};
	wins[1] = (struct prof_window){.start = 500 * MS, .end = 650 * MS, .process = 0};
	wins[2] = (struct prof_window){.start = 600 * MS, .end = 700 * MS, .process = 1};
	p->windows = wins;
	p->nwindows = 3;
}

static void test_whole_run(void)
{
	struct profile p;
	struct run_span s;

	two_processes(&p, 0);
	span_of_run(&p, &s);
	CHECK_EQ_INT(s.windowed, 0);
	CHECK_EQ_INT(s.ns, 1000 * MS);
	CHECK_EQ_INT(span_in_process(&p, 0, 50 * MS, 150 * MS), 100 * MS);
	CHECK_EQ_INT(span_between(&p, 50 * MS, 150 * MS), 100 * MS);
}

static void test_windows(void)
{
	struct profile p;
	struct run_span s;

	two_processes(&p, 1);
	span_of_run(&p, &s);
	CHECK_EQ_INT(s.windowed, 1);
	CHECK_EQ_INT(s.windows, 2);
	/* [100, 200) + [500, 700): process 1's life overlaps the second window */
	CHECK_EQ_INT(s.ns, 300 * MS);
	CHECK_EQ_INT(s.start, 100 * MS);
	CHECK_EQ_INT(s.end, 700 * MS);
	/* a thread of process 0 alive [150, 600): 50 ms + 100 ms recorded */
	CHECK_EQ_INT(span_in_process(&p, 0, 150 * MS, 600 * MS), 150 * MS);
	/* process 1 has no controls: all of it */
	CHECK_EQ_INT(span_in_process(&p, 1, 610 * MS, 690 * MS), 80 * MS);
	CHECK_EQ_INT(span_in_process(&p, 0, 300 * MS, 300 * MS), 0);
	/* GPU activity from 150 to 550 ms: 50 + 50 ms were watched */
	CHECK_EQ_INT(span_between(&p, 150 * MS, 550 * MS), 100 * MS);
	CHECK_EQ_INT(span_between(&p, 200 * MS, 500 * MS), 0);
}

int main(void)
{
	test_whole_run();
	test_windows();
	return test_result();
}
