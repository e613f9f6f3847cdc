/*
 * test_schedule.c — the --schedule parser and torch.profiler.schedule's
 * decision per step (src/format/cbn_schedule.h), shared by the launcher and
 * the agent: which steps are recorded for wait/warmup/active/repeat/
 * skip_first, and which texts are refused.
 */
#include <string.h>

#include "testlib.h"
#include "format/cbn_schedule.h"

/* The recorded steps among 0..n-1 as a string of 0/1. */
static void pattern(const char *spec, int n, char *out)
{
	struct cbn_schedule s;
	int i;

	REQUIRE(cbn_schedule_parse(spec, &s) == 0);
	for (i = 0; i < n; i++)
		out[i] = cbn_schedule_active(&s, (uint64_t)i) ? '1' : '0';
	out[n] = 0;
}

static void test_torch_semantics(void)
{
	char p[64];

	/* torch's docs example: wait=1, warmup=1, active=2 records steps 2 and 3 */
	pattern("wait=1,warmup=1,active=2", 8, p);
	CHECK_STR(p, "00110011");
	pattern("wait=1,warmup=1,active=2,repeat=1", 8, p);
	CHECK_STR(p, "00110000");
	pattern("skip_first=3,wait=0,warmup=0,active=1,repeat=2", 8, p);
	CHECK_STR(p, "00011000");
	pattern("active=3", 5, p);
	CHECK_STR(p, "11111");
	pattern("repeat=2,active=1,wait=2", 10, p);
	CHECK_STR(p, "0010010000");
}

/* The case: 12 steps under wait=2,warmup=1,active=4 record 3-6 and,
 * the cycle repeating, 10-11 (the run ends inside that active window, which
 * the agent keeps: its window closes at exit); repeat=1 stops after 3-6;
 * skip_first moves every cycle. */
static void test_torch_twelve(void)
{
	char p[64];

	pattern("wait=2,warmup=1,active=4", 12, p);
	CHECK_STR(p, "000111100011");
	pattern("wait=2,warmup=1,active=4,repeat=1", 12, p);
	CHECK_STR(p, "000111100000");
	pattern("wait=2,warmup=1,active=4,repeat=2", 16, p);
	CHECK_STR(p, "0001111000111100");
	pattern("skip_first=2,wait=2,warmup=1,active=4", 12, p);
	CHECK_STR(p, "000001111000");
	pattern("skip_first=2,wait=2,warmup=1,active=4,repeat=1", 20, p);
	CHECK_STR(p, "00000111100000000000");
}

static void test_done(void)
{
	struct cbn_schedule s;

	REQUIRE(cbn_schedule_parse("wait=1,active=1,repeat=2", &s) == 0);
	CHECK(!cbn_schedule_done(&s, 3));
	CHECK(cbn_schedule_done(&s, 4));
	REQUIRE(cbn_schedule_parse("wait=1,active=1", &s) == 0);
	CHECK(!cbn_schedule_done(&s, 1000000));
}

static void test_refused(void)
{
	static const char *const bad[] = {
		"", "active=0", "wait=1", "active=", "active=x", "active=1,", "active=-1",
		"activ=1", "active=1,speed=2", "active=1;wait=2", "active 1", "=1",
	};
	struct cbn_schedule s;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(cbn_schedule_parse(bad[i], &s) < 0);
	CHECK(cbn_schedule_parse(NULL, &s) < 0);
	CHECK(cbn_schedule_parse("active=2,wait=1,warmup=3,repeat=4,skip_first=5", &s) == 0);
	CHECK(s.active == 2 && s.wait == 1 && s.warmup == 3 && s.repeat == 4 && s.skip_first == 5);
}

int main(void)
{
	test_torch_semantics();
	test_torch_twelve();
	test_done();
	test_refused();
	return test_result();
}
