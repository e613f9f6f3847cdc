/*
 * test_load_capture.c — the loader's capture windows (load_capture.c) on
 * synthetic session files: header.capture into prof_process.capture,
 * CAPTURE OPEN..CLOSE pairs into prof.windows (a schedule's window numbered
 * from the step that opened it, one left open closed at the process's end),
 * MARK into prof.ctl_marks, a record of an unknown event skipped with a
 * warning, a mark name running past its record cut by the reader (never a
 * crash, nor do random bytes over the records); a run without controls is
 * one window.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "load.h"
#include "profile.h"
#include "test_reader_synth.h"
#include "testlib.h"

static void capture_rec(struct synth *s, uint64_t ts, uint16_t event, uint16_t cause,
			uint64_t step, const char *name)
{
	struct cbn_rec_capture r;

	memset(&r, 0, sizeof(r));
	r.h.type = CBN_REC_CAPTURE;
	r.ts = ts;
	r.step = step;
	r.tid = 77;
	r.event = event;
	r.cause = cause;
	r.name_len = name ? (uint32_t)strlen(name) : 0;
	synth_var(s, &r, sizeof(r), name ? name : "", NULL);
}

static struct profile *load_one_file(struct synth *s, char *dir, size_t dirlen)
{
	char path[256], err[256];
	struct profile *p = NULL;
	int ret;

	snprintf(dir, dirlen, "/tmp/cbn-test-load-capture-XXXXXX");
	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/77.0.cbp", dir);
	REQUIRE(synth_write(s, path) == 0);
	ret = prof_load(dir, &p, err, sizeof(err));
	if (ret < 0)
		fprintf(stderr, "prof_load: %s\n", err);
	REQUIRE(ret >= 0 && p != NULL);
	unlink(path);
	rmdir(dir);
	return p;
}

static int has_warning(const struct profile *p, const char *what)
{
	size_t i;

	for (i = 0; i < p->nwarnings; i++)
		if (strstr(p->warnings[i], what))
			return 1;
	return 0;
}

static void test_controlled(void)
{
	static const char spec[] = "schedule=wait=1,warmup=1,active=3";
	struct synth s;
	struct cbn_file_header *h;
	struct profile *p;
	char dir[64];

	synth_init(&s, 77, 1, 0, 0, "/nonexistent/prog");
	h = synth_hdr(&s);
	h->capture.mode = CBN_CAPTURE_CONTROLLED;
	h->capture.windows = 2;
	h->capture.steps = 12;
	h->capture.active_ns = 100000000;
	h->capture.spec_len = (uint32_t)strlen(spec);
	memcpy(h->capture.spec, spec, sizeof(spec));
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	/* written by two threads: not in time order in the file */
	capture_rec(&s, 1200000000ull, CBN_CAPTURE_CLOSE, CBN_CAUSE_SCHEDULE, 5, NULL);
	capture_rec(&s, 1100000000ull, CBN_CAPTURE_OPEN, CBN_CAUSE_SCHEDULE, 3, NULL);
	capture_rec(&s, 1250000000ull, CBN_CAPTURE_MARK, CBN_CAUSE_CTL, 5, "checkpoint");
	capture_rec(&s, 1300000000ull, 9, CBN_CAUSE_CTL, 5, NULL); /* unknown event */
	capture_rec(&s, 1500000000ull, CBN_CAPTURE_OPEN, CBN_CAUSE_API, 7, NULL);
	capture_rec(&s, 1600000000ull, CBN_CAPTURE_OPEN, CBN_CAUSE_CTL, 7, NULL); /* inside one */
	p = load_one_file(&s, dir, sizeof(dir));
	REQUIRE(p->nprocesses == 1);
	CHECK_EQ_INT(p->processes[0].capture.mode, CBN_CAPTURE_CONTROLLED);
	CHECK_STR(p->processes[0].capture.spec, spec);
	CHECK_EQ_INT(p->processes[0].capture.steps, 12);
	CHECK_EQ_INT(p->processes[0].capture.windows, 2);
	REQUIRE(p->nwindows == 2);
	CHECK_EQ_INT(p->windows[0].start, 1100000000ull);
	CHECK_EQ_INT(p->windows[0].end, 1200000000ull);
	CHECK_EQ_INT(p->windows[0].first_step, 3); /* the step the 3rd cbn_step() started */
	CHECK_EQ_INT(p->windows[0].open_cause, CBN_CAUSE_SCHEDULE);
	CHECK_EQ_INT(p->windows[0].close_cause, CBN_CAUSE_SCHEDULE);
	/* left open: closed at the process's end */
	CHECK_EQ_INT(p->windows[1].start, 1500000000ull);
	CHECK_EQ_INT(p->windows[1].end, 3000000000ull);
	CHECK_EQ_INT(p->windows[1].first_step, 7);
	CHECK_EQ_INT(p->windows[1].open_cause, CBN_CAUSE_API);
	CHECK_EQ_INT(p->windows[1].close_cause, CBN_CAUSE_EXIT);
	CHECK_EQ_INT(p->processes[0].capture.active_ns, 100000000ull + 1500000000ull);
	REQUIRE(p->nctl_marks == 1);
	CHECK_EQ_INT(p->ctl_marks[0].ts, 1250000000ull);
	CHECK_STR(p->ctl_marks[0].name, "checkpoint");
	CHECK(has_warning(p, "unknown event 9"));
	CHECK(has_warning(p, "1 capture records out of order"));
	prof_free(p);
	synth_free(&s);
}

static void test_corrupt_name(void)
{
	struct synth s;
	struct cbn_rec_capture r;
	struct profile *p;
	char dir[64];

	synth_init(&s, 77, 1, 0, 0, "/nonexistent/prog");
	synth_hdr(&s)->capture.mode = CBN_CAPTURE_CONTROLLED;
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	capture_rec(&s, 1100000000ull, CBN_CAPTURE_OPEN, CBN_CAUSE_START, 0, NULL);
	/* a mark whose name runs past the record */
	memset(&r, 0, sizeof(r));
	r.h.type = CBN_REC_CAPTURE;
	r.h.size = sizeof(r) + 8;
	r.event = CBN_CAPTURE_MARK;
	r.cause = CBN_CAUSE_CTL;
	r.name_len = 4000;
	synth_var(&s, &r, sizeof(r), "abc", NULL);
	p = load_one_file(&s, dir, sizeof(dir));
	CHECK(p->processes[0].damaged);
	CHECK(has_warning(p, "capture mark name does not fit"));
	CHECK_EQ_INT(p->nctl_marks, 0);
	REQUIRE(p->nwindows == 1);
	CHECK_EQ_INT(p->windows[0].end, 3000000000ull);
	prof_free(p);
	synth_free(&s);
}

static void test_no_controls(void)
{
	struct synth s;
	struct profile *p;
	char dir[64];

	synth_init(&s, 77, 1, 0, 0, "/nonexistent/prog");
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	synth_exit(&s, 2900000000ull, 0);
	p = load_one_file(&s, dir, sizeof(dir));
	CHECK_EQ_INT(p->processes[0].capture.mode, CBN_CAPTURE_ALL);
	CHECK_STR(p->processes[0].capture.spec, "");
	REQUIRE(p->nwindows == 1);
	CHECK_EQ_INT(p->windows[0].start, 1000000000ull);
	CHECK_EQ_INT(p->windows[0].end, 3000000000ull);
	CHECK_EQ_INT(p->windows[0].open_cause, CBN_CAUSE_START);
	CHECK_EQ_INT(p->windows[0].first_step, 0);
	CHECK_EQ_INT(p->nwarnings, 0);
	prof_free(p);
	synth_free(&s);
}

/* Random bytes over the capture records: the loader warns or cuts, never
 * crashes, and every window it keeps is well formed. */
static void test_mutated(void)
{
	char dir[] = "/tmp/cbn-test-load-capture-fuzz-XXXXXX", path[256], err[256];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	struct synth s;
	size_t base, len, i, k;
	unsigned char *orig;

	synth_init(&s, 77, 1, 0, 0, "/nonexistent/prog");
	synth_hdr(&s)->capture.mode = CBN_CAPTURE_CONTROLLED;
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	base = (size_t)s.cur;
	for (i = 0; i < 8; i++) {
		capture_rec(&s, 1100000000ull + i * 100000000ull,
			    i % 2 ? CBN_CAPTURE_CLOSE : CBN_CAPTURE_OPEN, CBN_CAUSE_SCHEDULE, i, NULL);
		capture_rec(&s, 1150000000ull + i * 100000000ull, CBN_CAPTURE_MARK, CBN_CAUSE_CTL,
			    i, "mark");
	}
	len = sizeof(struct cbn_chunk_header) +
	      ((struct cbn_chunk_header *)(s.buf + base))->used;
	REQUIRE((orig = malloc(len)) != NULL);
	memcpy(orig, s.buf + base, len);
	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/77.0.cbp", dir);
	for (i = 0; i < 300; i++) {
		struct profile *p = NULL;

		memcpy(s.buf + base, orig, len);
		for (k = 0; k < 1 + i % 8; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			/* past the chunk header: the records */
			s.buf[base + sizeof(struct cbn_chunk_header) +
			      (x >> 8) % (len - sizeof(struct cbn_chunk_header))] = (unsigned char)x;
		}
		REQUIRE(synth_write(&s, path) == 0);
		if (prof_load(dir, &p, err, sizeof(err)) >= 0 && p) {
			for (k = 0; k < p->nwindows; k++)
				CHECK(p->windows[k].end >= p->windows[k].start);
			for (k = 0; k < p->nctl_marks; k++)
				CHECK(p->ctl_marks[k].name != NULL);
			prof_free(p);
		}
	}
	unlink(path);
	rmdir(dir);
	free(orig);
	synth_free(&s);
}

int main(void)
{
	test_controlled();
	test_mutated();
	test_corrupt_name();
	test_no_controls();
	return test_result();
}
