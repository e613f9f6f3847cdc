/*
 * test_util.c — src/util's small helpers, each with its one home: the base
 * name of a path and the uint64_t comparison qsort uses.
 */
#include <stdint.h>
#include <stdlib.h>

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

int main(void)
{
	test_base_name();
	test_u64_cmp();
	return test_result();
}
