/*
 * test_util.c — src/util's small helpers, each with its one home: the base
 * name of a path, the uint64_t comparison qsort uses, the union of intervals
 * and the three ways a duration is written; and src/format's weight of a
 * sampled allocation (cbn_weight.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "cbn_weight.h"
#include "testlib.h"
#include "util.h"

static void test_base_name(void)
{
	CHECK_STR(util_base_name("/usr/lib/libc.so.6"), "libc.so.6");
	CHECK_STR(util_base_name("libc.so.6"), "libc.so.6");
	CHECK_STR(util_base_name("dir/"), "");
	CHECK_STR(util_base_name("/"), "");
	CHECK_STR(util_base_name(""), "");
	CHECK_STR(util_base_name(NULL), "");
}

static void test_u64_cmp(void)
{
	uint64_t v[] = { 5, UINT64_MAX, 0, 5, 1ull << 40, 3 };
	uint64_t a = 1, b = UINT64_MAX;
	size_t i;

	CHECK(util_u64_cmp(&a, &b) < 0);
	CHECK(util_u64_cmp(&b, &a) > 0);
	CHECK_EQ_INT(util_u64_cmp(&a, &a), 0);
	qsort(v, sizeof(v) / sizeof(v[0]), sizeof(v[0]), util_u64_cmp);
	for (i = 1; i < sizeof(v) / sizeof(v[0]); i++)
		CHECK(v[i - 1] <= v[i]);
	CHECK(v[5] == UINT64_MAX);
}

/* Out of order, overlapping, nested, touching, empty and duplicated
 * intervals: the union's disjoint pieces in order, and their length. */
static void test_ival_union(void)
{
	struct util_ival v[] = { { 50, 60 }, { 10, 20 }, { 15, 30 }, { 12, 14 }, { 30, 35 },
				 { 40, 40 }, { 50, 60 }, { 55, 70 }, { 100, 101 } };
	struct util_ival one = { 7, 9 }, none[1];
	uint64_t len = 1;
	size_t m = util_ival_union(v, sizeof(v) / sizeof(v[0]), &len);

	CHECK(m == 4);
	CHECK(v[0].s == 10 && v[0].e == 35);   /* [10,20) [15,30) [12,14) [30,35): touching joins */
	CHECK(v[1].s == 40 && v[1].e == 40);   /* empty, apart: a piece of length 0 */
	CHECK(v[2].s == 50 && v[2].e == 70);
	CHECK(v[3].s == 100 && v[3].e == 101);
	CHECK(len == 25 + 0 + 20 + 1);
	CHECK(util_ival_union(&one, 1, &len) == 1 && len == 2 && one.s == 7 && one.e == 9);
	CHECK(util_ival_union(none, 0, &len) == 0 && len == 0);
	CHECK(util_ival_union(&one, 1, NULL) == 1);
}

/* Each style at its units' edges: tables and prose choose on the value as
 * printed, the gate on the value as it is, signed. */
static void test_fmt_ns(void)
{
	char b[64];

	CHECK_STR(util_fmt_time(b, sizeof(b), 999999999.0), "1.000s");
	CHECK_STR(util_fmt_time(b, sizeof(b), 999499999.0), "999.500ms");
	CHECK_STR(util_fmt_time(b, sizeof(b), 999500.0), "1.000ms");
	CHECK_STR(util_fmt_time(b, sizeof(b), 850.0), "0.850us");
	CHECK_STR(util_fmt_time(b, sizeof(b), -5e6), "-5000.000us");
	CHECK_STR(util_fmt_dur(b, sizeof(b), 1e6), "1.000 ms");
	CHECK_STR(util_fmt_dur(b, sizeof(b), 999.5), "1.000 us");
	CHECK_STR(util_fmt_dur(b, sizeof(b), 850.0), "850 ns");
	CHECK_STR(util_fmt_dur(b, sizeof(b), 2.5e9), "2.500 s");
	CHECK_STR(util_fmt_ns(b, sizeof(b), 1e6, UTIL_DUR_GATE), "1.0 ms");
	CHECK_STR(util_fmt_ns(b, sizeof(b), 999999.0, UTIL_DUR_GATE), "1000.0 us");
	CHECK_STR(util_fmt_ns(b, sizeof(b), -12345678.0, UTIL_DUR_GATE), "-12.3 ms");
	CHECK_STR(util_fmt_ns(b, sizeof(b), 1.5e9, UTIL_DUR_GATE), "1.500 s");
	CHECK_STR(util_fmt_ns(b, sizeof(b), 850.0, UTIL_DUR_GATE), "850 ns");
}

/* Each style at its units' edges, both signs: the gate writes one decimal
 * below GiB and nothing above it. */
static void test_fmt_size(void)
{
	char b[64];

	CHECK_STR(util_fmt_bytes(b, sizeof(b), 1023.0), "1023 B");
	CHECK_STR(util_fmt_bytes(b, sizeof(b), 1536.0), "1.50 KiB");
	CHECK_STR(util_fmt_bytes(b, sizeof(b), -1536.0), "-1.50 KiB");
	CHECK_STR(util_fmt_bytes(b, sizeof(b), 1048575.0), "1024.00 KiB");
	CHECK_STR(util_fmt_bytes(b, sizeof(b), 2199023255552.0), "2.00 TiB");
	CHECK_STR(util_fmt_size(b, sizeof(b), 1023.0, UTIL_SIZE_GATE), "1023 B");
	CHECK_STR(util_fmt_size(b, sizeof(b), -1536.0, UTIL_SIZE_GATE), "-1.5 KiB");
	CHECK_STR(util_fmt_size(b, sizeof(b), 1048576.0, UTIL_SIZE_GATE), "1.0 MiB");
	CHECK_STR(util_fmt_size(b, sizeof(b), 1073741824.0, UTIL_SIZE_GATE), "1.00 GiB");
	CHECK_STR(util_fmt_size(b, sizeof(b), 2199023255552.0, UTIL_SIZE_GATE), "2048.00 GiB");
	CHECK_STR(util_fmt_size(b, sizeof(b), NAN, UTIL_SIZE_GATE), "nan GiB");
	CHECK_STR(util_fmt_size(b, sizeof(b), NAN, UTIL_SIZE_REPORT), "nan B");
}

/* Every allocation recorded: each stands for itself; sampled at rate r, a
 * block of r bytes was kept with probability 1 - 1/e. */
static void test_mem_weight(void)
{
	double p = 1 - exp(-1.0);

	CHECK(cbn_mem_weight_bytes(100, 0) == 100.0);
	CHECK(cbn_mem_weight_bytes(100, 1) == 100.0);
	CHECK(cbn_mem_weight_allocs(100, 1) == 1.0);
	CHECK(cbn_mem_weight_bytes(0, 4096) == 0.0);
	CHECK(cbn_mem_weight_allocs(0, 4096) == 1.0);
	CHECK(fabs(cbn_mem_sampled_p(4096, 4096) - p) < 1e-12);
	CHECK(fabs(cbn_mem_weight_bytes(4096, 4096) - 4096 / p) < 1e-9);
	CHECK(fabs(cbn_mem_weight_allocs(4096, 4096) - 1 / p) < 1e-12);
	/* a block far larger than the rate is all but certain to be sampled */
	CHECK(fabs(cbn_mem_weight_allocs(1 << 30, 512) - 1.0) < 1e-12);
	/* a tiny block stands for about rate / size allocations of its size */
	CHECK(fabs(cbn_mem_weight_allocs(1, 1 << 20) / (1 << 20) - 1.0) < 1e-5);
}

int main(void)
{
	test_base_name();
	test_u64_cmp();
	test_ival_union();
	test_fmt_ns();
	test_fmt_size();
	test_mem_weight();
	return test_result();
}
