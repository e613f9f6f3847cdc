/*
 * test_util.c — src/util's small helpers, each with its one home: the base
 * name of a path and the uint64_t comparison qsort uses; and src/format's
 * weight of a sampled allocation (cbn_weight.h).
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
	test_mem_weight();
	return test_result();
}
